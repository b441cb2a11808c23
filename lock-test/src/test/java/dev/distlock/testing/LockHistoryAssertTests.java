package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static dev.distlock.testing.LockAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** Each assertion passes on what happened and fails, with the key's history, on what did not. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockHistoryAssertTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Instant START = Instant.parse("2030-01-01T00:00:00Z");

	private final ManualLockClock clock = new ManualLockClock(START);

	private final InMemoryLockService app = InMemoryLockService.builder().clock(this.clock).clientId("app").build();

	private final LockScenarios locks = LockScenarios.of(this.app);

	@Test
	void acquiredCountsNewLeasesNotReentries() {
		Lease lease = this.app.acquire("k", TTL, Duration.ZERO);
		this.app.acquire("k", TTL, Duration.ZERO).release();
		lease.release();
		this.app.acquire("k", TTL, Duration.ZERO).release();

		assertThat(this.locks).acquired("k").times(2).releasedEverything();
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).acquired("k").times(1))
			.withMessageStartingWith("Expected lock 'k' to have been acquired 1 time(s), but it was 2 time(s); "
					+ "history of 'k':")
			.withMessageContaining("  2030-01-01T00:00:00Z ACQUIRED 'k' by app:")
			.withMessageContaining("REENTERED 'k'");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).acquired("other"))
			.withMessage("Expected lock 'other' to have been acquired, but it never was; history of 'other': (empty)");
	}

	@Test
	void neverLockedFailsNamingHowOften() {
		this.app.acquire("k", TTL, Duration.ZERO).release();

		assertThat(this.locks).neverLocked("other");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).neverLocked("k"))
			.withMessageStartingWith("Expected lock 'k' never to have been acquired, but it was 1 time(s); history of 'k':")
			.withMessageContaining("RELEASED 'k' by app:");
	}

	@Test
	void wasBusyWhenAnAcquisitionEndedWithoutTheKey() {
		this.locks.holdElsewhere("busy", Duration.ofSeconds(5));
		assertThat(this.app.tryAcquire("busy", TTL, Duration.ZERO)).isEmpty();
		this.app.acquire("free", TTL, Duration.ZERO).release();

		assertThat(this.locks).wasBusy("busy").neverLocked("busy");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).wasBusy("free"))
			.withMessageStartingWith("Expected an acquisition of lock 'free' to have found it busy (ended without it), "
					+ "but none did; history of 'free':")
			.withMessageContaining("ACQUIRED 'free' by app:");
	}

	@Test
	void waitedAtMostMeasuresEveryAttemptOnTheStoresClock() throws Exception {
		this.locks.holdElsewhere("k", Duration.ofSeconds(3));
		CompletableFuture<Optional<Lease>> waiting = this.app.tryAcquireAsync(LockRequest.of("k", TTL, TTL),
				LockOwner.newOwner());
		this.locks.advance(Duration.ofSeconds(3));
		waiting.get(10, TimeUnit.SECONDS).orElseThrow().release();

		assertThat(this.locks).waitedAtMost("k", Duration.ofSeconds(3));
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.locks).waitedAtMost("k", Duration.ofMillis(2999)))
			.withMessageStartingWith("Expected acquisitions of lock 'k' to have waited at most PT2.999S, but one waited "
					+ "PT3S; history of 'k':")
			.withMessageContaining("HELD_ELSEWHERE 'k' by elsewhere:1")
			.withMessageContaining("ACQUIRED 'k' by app:")
			.withMessageContaining(", waited PT3S");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.locks).waitedAtMost("never", Duration.ofSeconds(1)))
			.withMessageStartingWith("Expected acquisitions of lock 'never' to have waited at most PT1S, but there was none");
	}

	@Test
	void lostWhenALeaseWasLostWhileHeld() {
		Lease lease = this.app.acquire("lost", TTL, Duration.ZERO);
		this.locks.loseNow("lost");
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		this.app.acquire("kept", TTL, Duration.ZERO).release();

		assertThat(this.locks).lost("lost").releasedEverything();
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).lost("kept"))
			.withMessageStartingWith("Expected a lease of lock 'kept' to have been lost, but none was; history of 'kept':");
	}

	@Test
	void failedWhenRedisDidNotAnswer() {
		this.locks.unreachableForNextCalls(1);
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> this.app.tryAcquire("failed", TTL, Duration.ZERO));
		this.app.acquire("answered", TTL, Duration.ZERO).release();

		assertThat(this.locks).failed("failed").neverLocked("failed");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).failed("answered"))
			.withMessageStartingWith("Expected an acquisition of lock 'answered' to have failed, but none did");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).wasBusy("failed"))
			.withMessageContaining("FAILED 'failed' by app, waited PT0S (Could not acquire lock 'failed'");
	}

	@Test
	void releasedEverythingFindsALeakedHoldButNotAnotherInstances() {
		this.locks.holdElsewhere("elsewhere");
		Lease outer = this.app.acquire("leaked", TTL, Duration.ZERO);
		this.app.acquire("leaked", TTL, Duration.ZERO).release();

		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> assertThat(this.locks).releasedEverything())
			.withMessageStartingWith("Expected every lease to have been released, but these were not: 'leaked' (owner "
					+ outer.owner() + ", 1 hold(s)); history:")
			.withMessageContaining("HELD_ELSEWHERE 'elsewhere'");
		outer.release();
		assertThat(this.locks).releasedEverything();
	}

	@Test
	void aNullHistoryFailsEveryAssertion() {
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat((LockScenarios) null).releasedEverything())
			.withMessageContaining("Expecting actual not to be null");
	}

}
