package dev.distlock.redis.internal.single;

import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockLostEvent;
import dev.distlock.redis.internal.kind.ExclusiveKind;
import dev.distlock.redis.internal.lease.PendingReentries;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The state rules of one held lease, without Redis: the orders of events that real Redis produces only now and then
 * on a loaded machine, replayed deterministically.
 */
class LeaseEntryTests {

	private static final long INTERVAL = TimeUnit.MILLISECONDS.toNanos(200);

	private static LeaseEntry entry(long now) {
		return new LeaseEntry("k", "lock:{k}", "lock:{k}:released", "client:1", "name", 42, 600, true, now, 0, ExclusiveKind.INSTANCE);
	}

	@Test
	void aRenewalThatMeetsTheHoldersOwnLastReleaseIsNotALoss() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now);
		assertThat(entry.claimRenewal(now + INTERVAL, INTERVAL, 0)).isTrue();
		// the holder sends its release; Redis runs it before the renewal, whose reply is applied first
		entry.releaseStarting();
		assertThat(entry.renewalDone(false, now + INTERVAL, INTERVAL)).isNull();
		assertThat(entry.state()).isEqualTo(LeaseEntry.State.HELD);
		assertThat(entry.releaseHold(true)).isTrue();
		assertThat(entry.state()).isEqualTo(LeaseEntry.State.RELEASED);
		assertThat(entry.lostEvent()).isNull();
	}

	@Test
	void aReleasingLeaseIsNotRenewedAgain() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now);
		entry.releaseStarting();
		assertThat(entry.isRenewalDue(now + 2 * INTERVAL, INTERVAL)).isFalse();
		assertThat(entry.claimRenewal(now + 2 * INTERVAL, INTERVAL, 0)).isFalse();
	}

	@Test
	void aRenewalThatFindsTheLeaseGoneIsALossWhileNoReleaseIsOnItsWay() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now);
		entry.reenter(600, true, now, entry.reentryTarget());
		entry.releaseStarting(); // the release of an inner hold: it deletes nothing
		assertThat(entry.releaseHold(false)).isFalse();
		assertThat(entry.claimRenewal(now + INTERVAL, INTERVAL, 0)).isTrue();
		LockLostEvent event = entry.renewalDone(false, now + INTERVAL, INTERVAL);
		assertThat(event).isNotNull();
		assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
		assertThat(event.owner()).isEqualTo("client:1");
		assertThat(entry.isLost()).isTrue();
	}

	@Test
	void aReleaseThatAReEntryOvertookLeavesTheLeaseRenewed() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now);
		// another thread releases the only hold while the holder re-enters; Redis runs the re-entry first
		entry.releaseStarting();
		assertThat(entry.reenter(600, true, now, entry.reentryTarget())).isTrue();
		assertThat(entry.releaseHold(false)).isFalse();
		assertThat(entry.isRenewalDue(now + 2 * INTERVAL, INTERVAL)).isTrue();
		assertThat(entry.claimRenewal(now + 2 * INTERVAL, INTERVAL, 0)).isTrue();
	}

	@Test
	void aReEntryReservedJustAfterAnotherWasCountedAimsOneAboveTheHolds() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now); // one hold: Redis counts 1
		PendingReentries.Reentry first = entry.reentryTarget();
		assertThat(first.target).isEqualTo(2);
		// Redis counted the first (it has 2 now), and the holder counts it: the second, reserved right then, aims at 3,
		// neither at 4 (a hold nobody takes) nor at 2 (a hold Redis does not count)
		assertThat(entry.reenter(600, true, now, first)).isTrue();
		PendingReentries.Reentry second = entry.reentryTarget();
		assertThat(second.target).isEqualTo(3);
		entry.reentryAnswered(first); // the first caller's clean-up after counting changes nothing
		assertThat(entry.holdsBeforeRelease()).isEqualTo(3);
		PendingReentries.Reentry third = entry.reentryTarget();
		assertThat(third.target).isEqualTo(4);
		entry.reentryAnswered(second); // the second gave up: Redis may count it, the owner does not
		entry.reentryAnswered(second);
		assertThat(entry.holdsBeforeRelease()).isEqualTo(3); // two holds and the third on its way
		assertThat(entry.reenter(600, true, now, third)).isTrue();
		assertThat(entry.holdsBeforeRelease()).isEqualTo(3);
		assertThat(entry.reentryTarget().target).isEqualTo(4);
	}

	@Test
	void aLostLeaseShowsNoTimeLeft() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now);
		assertThat(entry.snapshot(now).ttlRemaining()).isPositive();
		entry.markLost(LockLostEvent.Detection.RENEWAL_FAILED);
		assertThat(entry.snapshot(now).lost()).isTrue();
		assertThat(entry.snapshot(now).ttlRemaining()).isZero();
	}

	@Test
	void anAnsweredReplaceSetsTheValidityAndLeaseTimeExactlyEvenWhenShorter() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now); // 600 ms
		long sent = now + INTERVAL;
		entry.replaced(sent, 100, TimeUnit.MILLISECONDS.toNanos(33), true);
		assertThat(entry.validUntilNanos()).isEqualTo(sent + TimeUnit.MILLISECONDS.toNanos(100));
		assertThat(entry.ttlMillis()).isEqualTo(100);
		// the next renewal comes one interval of the new time after the replace, not 200 ms after the acquisition
		assertThat(entry.isRenewalDue(sent + TimeUnit.MILLISECONDS.toNanos(34), TimeUnit.MILLISECONDS.toNanos(33))).isTrue();
	}

	@Test
	void anUnansweredReplaceAssumesTheShorterLeaseWhicheverItWas() {
		long now = System.nanoTime();
		long sent = now + INTERVAL;
		LeaseEntry shortened = entry(now);
		shortened.replaced(sent, 100, TimeUnit.MILLISECONDS.toNanos(33), false);
		assertThat(shortened.validUntilNanos()).as("it may have run: the new, shorter time")
			.isEqualTo(sent + TimeUnit.MILLISECONDS.toNanos(100));
		LeaseEntry lengthened = entry(now);
		lengthened.replaced(sent, 5_000, TimeUnit.MILLISECONDS.toNanos(1_666), false);
		assertThat(lengthened.validUntilNanos()).as("it may not have run: the old, shorter validity")
			.isEqualTo(now + TimeUnit.MILLISECONDS.toNanos(600));
		assertThat(lengthened.ttlMillis()).as("renewals raise the lease to the new time either way").isEqualTo(5_000);
	}

	@Test
	void anOwnershipCheckOnlyMovesTheValidityForward() {
		long now = System.nanoTime();
		LeaseEntry entry = entry(now);
		entry.observed(now + INTERVAL, 100); // the store says less than this process counts on: a lower bound too
		assertThat(entry.validUntilNanos()).isEqualTo(now + TimeUnit.MILLISECONDS.toNanos(600));
		entry.observed(now + INTERVAL, 60_000);
		assertThat(entry.validUntilNanos()).isEqualTo(now + INTERVAL + TimeUnit.SECONDS.toNanos(60));
	}

}
