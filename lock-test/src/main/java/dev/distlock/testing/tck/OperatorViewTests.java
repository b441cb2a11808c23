package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The operator's view ({@link LockOperatorView}), what the {@code locks} endpoint, the health indicator and the gauges
 * read: the leases an instance holds, its waiters, its lock names, its renewals; and the forced release.
 */
abstract class OperatorViewTests extends DirectoryTests {


	/** Held leases are listed with their holds, token, owner and mode, until released. */
	@Test
	void heldLeasesAreListedUntilReleased() {
		String renewedKey = key("listed-renewed");
		String fixedKey = key("listed-fixed");
		LockService service = instance();
		LockOperatorView view = view(service);
		assertThat(view.activeLeases()).isEmpty();
		Lease outer = service.acquire(renewedKey, LONG_TTL, Duration.ZERO);
		Lease inner = service.acquire(renewedKey, LONG_TTL, Duration.ZERO);
		Lease fixed = service.acquire(request(fixedKey, LONG_TTL, Duration.ZERO).withFixedLease().withName("fixed"));
		assertThat(view.activeLeases()).hasSize(2).anySatisfy((snapshot) -> {
			assertThat(snapshot.key()).isEqualTo(renewedKey);
			assertThat(snapshot.holdCount()).isEqualTo(2);
			assertThat(snapshot.owner()).isEqualTo(outer.owner()).startsWith(view.clientId());
			assertThat(snapshot.fencingToken()).isEqualTo(outer.fencingToken());
			assertThat(snapshot.autoRenewed()).isTrue();
			assertThat(snapshot.lost()).isFalse();
			assertThat(snapshot.mode()).isEqualTo(LockMode.EXCLUSIVE);
			assertThat(snapshot.ttlRemaining()).isPositive().isLessThanOrEqualTo(LONG_TTL);
		}).anySatisfy((snapshot) -> {
			assertThat(snapshot.key()).isEqualTo(fixedKey);
			assertThat(snapshot.name()).isEqualTo("fixed");
			assertThat(snapshot.holdCount()).isEqualTo(1);
			assertThat(snapshot.autoRenewed()).isFalse();
		});
		assertThat(view.activeLeaseCount()).isEqualTo(2);
		assertThat(view.lostLeaseCount()).isZero();
		inner.release();
		outer.release();
		fixed.release();
		assertThat(view.activeLeases()).isEmpty();
		assertThat(view.activeLeaseCount()).isZero();
	}

	/** Waiting callers are counted, in all and by lock name, and held leases by lock name. */
	@Test
	void waitersAndLeasesAreCountedByName() {
		String key = key("counted");
		LockService holder = instance();
		LockService waiter = instance();
		LockOperatorView view = view(waiter);
		Lease held = holder.acquire(request(key, LONG_TTL, Duration.ZERO).withName("orders"));
		Future<Lease> waiting = inBackground(() -> waiter.acquire(request(key, LONG_TTL, LONG_WAIT).withName("orders")));
		await().atMost(PATIENCE).until(() -> view.waitingThreads() == 1);
		assertThat(view.activityByName().waitingThreads("orders")).isEqualTo(1);
		assertThat(view.activityByName().heldLeases("orders")).isZero();
		held.release();
		Lease lease = get(waiting);
		assertThat(view.waitingThreads()).isZero();
		assertThat(view.activityByName().heldLeases("orders")).isEqualTo(1);
		assertThat(view.activityByName().waitingThreads("orders")).isZero();
		lease.release();
		assertThat(view.activityByName().heldLeases("orders")).isZero();
	}

	/** Lock names are announced before their first lease shows, and at once to an action registered later. */
	@Test
	void lockNamesAreAnnouncedBeforeTheirFirstLease() {
		LockService service = instance();
		LockOperatorView view = view(service);
		List<String> names = new CopyOnWriteArrayList<>();
		view.onLockName(names::add);
		try (Lease lease = service.acquire(request(key("named"), LONG_TTL, Duration.ZERO).withName("alpha"))) {
			assertThat(names).contains("alpha");
			assertThat(view.activityByName().heldLeases("alpha")).isEqualTo(1);
		}
		List<String> late = new CopyOnWriteArrayList<>();
		view.onLockName(late::add);
		assertThat(late).contains("alpha");
	}

	/**
	 * Leases are listed oldest first, by when they were acquired: not in key order, nor in whatever order the engine
	 * keeps them; a re-entry does not make a lease newer. The keys are taken in the reverse of their alphabetical
	 * order, with time passing between them, so that no other order passes by chance.
	 */
	@Test
	void leasesAreListedOldestFirst() {
		LockService service = instance();
		LockOperatorView view = view(service);
		List<String> keys = List.of(key("order-e"), key("order-d"), key("order-c"), key("order-b"), key("order-a"));
		List<Lease> leases = new ArrayList<>();
		for (String key : keys) {
			if (!leases.isEmpty()) {
				passTime(Duration.ofMillis(20)); // distinct acquisition times, on any clock
			}
			leases.add(service.acquire(key, LONG_TTL, Duration.ZERO));
		}
		Lease reentry = service.acquire(keys.get(0), LONG_TTL, Duration.ZERO);
		List<LeaseSnapshot> listed = view.activeLeases();
		assertThat(listed).extracting(LeaseSnapshot::key).containsExactlyElementsOf(keys);
		assertThat(listed).extracting(LeaseSnapshot::heldSince)
			.doesNotHaveDuplicates()
			.isSortedAccordingTo(Comparator.naturalOrder());
		assertThat(listed.get(0).holdCount()).isEqualTo(2);
		leases.get(2).release();
		assertThat(view.activeLeases()).extracting(LeaseSnapshot::key)
			.containsExactly(keys.get(0), keys.get(1), keys.get(3), keys.get(4));
		reentry.release();
		leases.stream().filter((lease) -> lease != leases.get(2)).forEach(Lease::release);
		assertThat(view.activeLeases()).isEmpty();
	}

	/**
	 * Only held leases count, in all and by lock name: the counts drop as soon as a lease is released, found lost, or,
	 * a fixed one, runs out of time; none stays counted until the engine tidies up.
	 */
	@Test
	void onlyHeldLeasesAreCounted() {
		LockService service = instance();
		LockOperatorView view = view(service);
		Lease released = service.acquire(request(key("count-released"), LONG_TTL, Duration.ZERO).withName("released"));
		Lease lost = service.acquire(request(key("count-lost"), LONG_TTL, Duration.ZERO).withName("lost"));
		assertThat(view.activeLeaseCount()).isEqualTo(2);
		assertThat(view.activityByName().heldLeases("released")).isEqualTo(1);
		assertThat(view.activityByName().heldLeases("lost")).isEqualTo(1);
		released.release();
		assertThat(view.activeLeaseCount()).isEqualTo(1);
		assertThat(view.activityByName().heldLeases("released")).isZero();
		loseLease(lost);
		assertThat(lost.isOwned()).isFalse();
		assertThat(view.activeLeaseCount()).isZero();
		assertThat(view.activityByName().heldLeases("lost")).isZero();
		assertThat(view.lostLeaseCount()).isEqualTo(1);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lost::release);
		assertThat(view.lostLeaseCount()).isZero();
		Lease expiring = service
			.acquire(request(key("count-expiring"), shortTtl(), Duration.ZERO).withFixedLease().withName("expiring"));
		assertThat(view.activityByName().heldLeases("expiring")).isEqualTo(1);
		passTime(shortTtl());
		// the engine sees the time run out on its own clock: on real time, a moment after the test's
		await().atMost(PATIENCE).until(() -> view.activeLeaseCount() == 0);
		assertThat(view.activityByName().heldLeases("expiring")).isZero();
		awaitFree(service, expiring.key());
		assertThatExceptionOfType(LockLostException.class).isThrownBy(expiring::release);
	}

	/**
	 * A lock-name action that throws is logged: the actions after it still hear the name, and the acquisition that
	 * brought the name goes on (on both Redis engines now; Redlock used to let the exception through).
	 */
	@Test
	void aLockNameActionThatThrowsKeepsNeitherTheOthersNorTheAcquisitionFromGoingOn() {
		LockService service = instance();
		LockOperatorView view = view(service);
		List<String> names = new CopyOnWriteArrayList<>();
		view.onLockName((name) -> {
			throw new IllegalStateException("A lock-name action that fails (thrown on purpose by the TCK)");
		});
		view.onLockName(names::add);
		Lease first = service.acquire(request(key("name-throws"), LONG_TTL, Duration.ZERO).withName("beta"));
		assertThat(names).containsExactly("beta");
		assertThat(first.isOwned()).isTrue();
		assertThat(view.activityByName().heldLeases("beta")).isEqualTo(1);
		first.release();
		try (Lease second = service.acquire(request(key("name-throws-2"), LONG_TTL, Duration.ZERO).withName("gamma"))) {
			assertThat(names).containsExactly("beta", "gamma");
			assertThat(second.isOwned()).isTrue();
		}
	}

	/** While the store answers, renewals do not fail. */
	@Test
	void renewalsAreHealthyWhileTheStoreAnswers() {
		LockService service = instance();
		LockOperatorView view = view(service);
		Lease lease = service.acquire(key("healthy"), shortTtl(), Duration.ZERO);
		passTime(shortTtl());
		assertThat(view.renewalStatus().isFailing()).isFalse();
		assertThat(lease.isOwned()).isTrue();
		lease.release();
	}

	/** A lost lease is listed as lost (no time left) until its last hold is released, and no longer counted as held. */
	@Test
	void aLostLeaseIsListedUntilItsLastHoldIsReleased() {
		String key = key("lost-twice");
		LockService service = instance();
		LockOperatorView view = view(service);
		Lease outer = service.acquire(key, LONG_TTL, Duration.ZERO);
		Lease inner = service.acquire(key, LONG_TTL, Duration.ZERO);
		loseLease(outer);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(inner::release);
		assertThat(view.activeLeases()).singleElement().satisfies((snapshot) -> {
			assertThat(snapshot.lost()).isTrue();
			assertThat(snapshot.holdCount()).isEqualTo(1);
			assertThat(snapshot.ttlRemaining()).isZero();
		});
		assertThat(view.activeLeaseCount()).isZero();
		assertThat(view.lostLeaseCount()).isEqualTo(1);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(outer::release);
		assertThat(view.activeLeases()).isEmpty();
		assertThat(view.lostLeaseCount()).isZero();
	}

	/**
	 * A forced release deletes the lease whoever holds it and reports its holder, holds and token; the key is free at
	 * once, and the holder finds its lease lost.
	 */
	@Test
	void aForcedReleaseReportsTheHolderAndFreesTheKey() {
		String key = key("forced");
		LockService holder = instance();
		LockService operator = instance();
		assumeTrue(operator instanceof LockForceReleaser, "the engine cannot force a release");
		LockForceReleaser releaser = (LockForceReleaser) operator;
		Lease outer = holder.acquire(key, LONG_TTL, Duration.ZERO);
		Lease inner = holder.acquire(key, LONG_TTL, Duration.ZERO);
		Optional<ForcedRelease> forced = releaser.forceRelease(key);
		assertThat(forced).hasValueSatisfying((release) -> {
			assertThat(release.key()).isEqualTo(key);
			assertThat(release.owner()).isEqualTo(outer.owner());
			assertThat(release.owners()).containsExactly(outer.owner());
			assertThat(release.holdCount()).isEqualTo(2);
			if (holderReportsTheLeasesOwnToken()) {
				assertThat(release.fencingToken()).isEqualTo(outer.fencingToken());
			}
			else {
				assertThat(release.fencingToken()).isGreaterThanOrEqualTo(outer.fencingToken());
			}
		});
		Lease next = operator.acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(next.fencingToken()).isGreaterThan(outer.fencingToken());
		assertThat(outer.isOwned()).isFalse();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(inner::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(outer::release);
		next.release();
		if (holderReportsTheLeasesOwnToken()) {
			assertThat(releaser.forceRelease(key)).isEmpty();
		}
		else {
			// a quorum engine's release returns once a quorum confirmed it; a slower node's delete may still be on its
			// way, and a forced release meanwhile finds (and removes) that remnant
			await().atMost(Duration.ofSeconds(10)).until(() -> releaser.forceRelease(key).isEmpty());
		}
		assertThatIllegalArgumentException().isThrownBy(() -> releaser.forceRelease(" "));
	}

}
