package dev.distlock.testing;

import java.time.Duration;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** Each scenario in one line, on the application's keys, and the readers of what happened. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockScenariosTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private final ManualLockClock clock = LockClock.manual();

	private final InMemoryLockService app = InMemoryLockService.builder().clock(this.clock).clientId("app").build();

	private final LockScenarios locks = LockScenarios.of(this.app);

	@Test
	void aKeyHeldElsewhereIsBusyUntilItsTimePasses() throws Exception {
		ForeignHold hold = this.locks.holdElsewhere("inventory:sku-42", Duration.ofSeconds(5));
		assertThat(this.app.tryAcquire("inventory:sku-42", TTL, Duration.ZERO)).isEmpty();
		CompletableFuture<Optional<Lease>> waiting = this.app
			.tryAcquireAsync(LockRequest.of("inventory:sku-42", TTL, Duration.ofSeconds(10)), LockOwner.newOwner());
		this.locks.advance(Duration.ofSeconds(5));
		Lease lease = waiting.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(lease.fencingToken()).isGreaterThan(hold.fencingToken());
		assertThat(this.locks.longestWait("inventory:sku-42")).isEqualTo(Duration.ofSeconds(5));
		lease.release();
	}

	@Test
	void aKeyHeldElsewhereUntilReleasedIsFreeWhenReleased() {
		ForeignHold hold = this.locks.holdElsewhere("k");
		this.locks.advance(Duration.ofHours(1));
		assertThat(this.app.isLocked("k")).isTrue();
		assertThat(hold.release()).isTrue();
		assertThat(this.app.tryAcquire("k", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
	}

	@Test
	void aLeaseLostNowIsKnownLostAtOnce() {
		Lease lease = this.app.acquire("k", TTL, Duration.ZERO);
		assertThat(this.locks.loseNow("k")).isEqualTo(1);
		assertThat(lease.isLost()).isTrue();
		assertThat(this.locks.loseNow("k")).as("nobody holds it any more").isZero();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
	}

	@Test
	void aLeaseLostAtTheNextRenewalIsFoundThen() {
		Lease lease = this.app.acquire("k", TTL, Duration.ZERO);
		assertThat(this.locks.loseAtNextRenewal("k")).isEqualTo(1);
		assertThat(lease.isLost()).isFalse();
		this.locks.advance(TTL.dividedBy(3));
		assertThat(lease.isLost()).isTrue();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
	}

	@Test
	void redisUnreachableForTheNextCallsThenAnswering() {
		this.locks.unreachableForNextCalls(1);
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> this.app.tryAcquire("k", TTL, Duration.ZERO));
		assertThat(this.app.tryAcquire("k", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
		assertThat(this.locks.failures()).singleElement()
			.satisfies((entry) -> assertThat(entry.detail()).contains("failNextCalls"));
	}

	@Test
	void redisUnreachableUntilReachableAgain() {
		this.locks.unreachable();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> this.app.tryAcquire("k", TTL, Duration.ZERO));
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> this.app.tryAcquire("k", TTL, Duration.ZERO));
		this.locks.reachable();
		assertThat(this.app.tryAcquire("k", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
		assertThat(this.locks.failures()).hasSize(2);
	}

	@Test
	void advancingTheSystemClockIsRefusedNamingTheWayToAManualOne() {
		LockScenarios onSystemClock = LockScenarios.of(new InMemoryLockStore());
		assertThat(onSystemClock.clock()).isEqualTo(LockClock.system());
		assertThatIllegalStateException().isThrownBy(() -> onSystemClock.advance(Duration.ofSeconds(1)))
			.withMessageStartingWith("LockScenarios.advance(Duration) needs a manual clock")
			.withMessageContaining("@AutoConfigureInMemoryLocks(manualClock = true)");
	}

	@Test
	void whatHappenedIsReadByKey() {
		this.app.acquire("b", TTL, Duration.ZERO).release();
		this.app.acquire("a", TTL, Duration.ZERO).release();
		this.app.acquire("b", TTL, Duration.ZERO).release();
		assertThat(this.locks.lockedKeys()).containsExactly("b", "a");
		assertThat(this.locks.timesLocked("b")).isEqualTo(2);
		assertThat(this.locks.timesLocked("c")).isZero();
		assertThat(this.locks.longestWait("a")).isZero();
		assertThat(this.locks.history()).isSameAs(this.app.store().history());
		assertThat(this.locks.store()).isSameAs(this.app.store());
	}

	@Test
	void resetEndsTheTestsOrdersButLeavesTheApplicationsLeases() {
		Lease held = this.app.acquire("held", TTL, Duration.ZERO);
		this.locks.holdElsewhere("elsewhere");
		this.locks.holdElsewhere("for-a-while", Duration.ofSeconds(5));
		this.locks.unreachableForNextCalls(5);
		this.locks.unreachable();

		this.locks.reset();

		assertThat(this.locks.history().entries()).isEmpty();
		assertThat(this.app.tryAcquire("elsewhere", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
		assertThat(this.app.tryAcquire("for-a-while", TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
		assertThat(held.isOwned()).isTrue();
		held.release();
	}

}
