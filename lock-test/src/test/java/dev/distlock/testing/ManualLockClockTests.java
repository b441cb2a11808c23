package dev.distlock.testing;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * A manual clock moves only when told, and the store catches up with it in the order of the times that passed: an
 * expiry at a waiter's deadline hands the key over, a deadline before the expiry ends the wait first, however far one
 * advance jumps.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ManualLockClockTests {

	private static final Duration TTL = Duration.ofSeconds(10);

	private final ManualLockClock clock = new ManualLockClock(Instant.parse("2030-01-01T00:00:00Z"));

	private final InMemoryLockStore store = new InMemoryLockStore(this.clock);

	private final InMemoryLockService holder = InMemoryLockService.builder(this.store).build();

	private final InMemoryLockService waiter = InMemoryLockService.builder(this.store).build();

	@Test
	void movesOnlyForward() {
		assertThat(this.clock.now()).isEqualTo(Instant.parse("2030-01-01T00:00:00Z"));
		this.clock.advance(Duration.ofMinutes(5));
		assertThat(this.clock.now()).isEqualTo(Instant.parse("2030-01-01T00:05:00Z"));
		this.clock.advance(Duration.ZERO);
		assertThat(this.clock.now()).isEqualTo(Instant.parse("2030-01-01T00:05:00Z"));
		assertThatIllegalArgumentException().isThrownBy(() -> this.clock.advance(Duration.ofMillis(-1)))
			.withMessageContaining("forward");
		assertThat(LockClock.system().now()).isCloseTo(Instant.now(), org.assertj.core.api.Assertions.within(1,
				java.time.temporal.ChronoUnit.SECONDS));
	}

	@Test
	void anExpiryAtAWaitersDeadlineHandsTheKeyOver() throws Exception {
		this.holder.acquire(LockRequest.of("k", TTL, Duration.ZERO).withFixedLease());
		CompletableFuture<Optional<Lease>> waiting = this.waiter.tryAcquireAsync(LockRequest.of("k", TTL, TTL),
				LockOwner.newOwner());
		this.clock.advance(Duration.ofHours(1));
		assertThat(waiting.get(10, TimeUnit.SECONDS)).hasValueSatisfying((lease) -> assertThat(lease.isHeld()).isTrue());
	}

	@Test
	void aDeadlineBeforeTheExpiryEndsTheWaitEvenWhenOneAdvancePassesBoth() throws Exception {
		this.holder.acquire(LockRequest.of("k", TTL, Duration.ZERO).withFixedLease());
		CompletableFuture<Optional<Lease>> waiting = this.waiter.tryAcquireAsync(
				LockRequest.of("k", TTL, TTL.minusMillis(1)), LockOwner.newOwner());
		this.clock.advance(Duration.ofHours(1));
		assertThat(waiting.get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(this.waiter.isLocked("k")).as("expired after the wait ended, and nobody took it").isFalse();
	}

	@Test
	void aBlockedThreadWaitsUntilTheClockPassesItsDeadline() throws Exception {
		this.holder.acquire("k", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = CompletableFuture
			.supplyAsync(() -> this.waiter.tryAcquire("k", TTL, Duration.ofSeconds(2)));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.waiter.waitingThreads() == 1);
		await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !waiting.isDone());
		this.clock.advance(Duration.ofSeconds(2));
		assertThat(waiting.get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(this.waiter.waitingThreads()).isZero();
	}

	@Test
	void renewalsKeepALeaseThroughAnyAdvance() {
		Lease lease = this.holder.acquire("k", TTL, Duration.ZERO);
		this.clock.advance(Duration.ofDays(400));
		assertThat(lease.isHeld()).isTrue();
		assertThat(this.holder.activeLeases()).singleElement().satisfies((snapshot) -> {
			// renewed every ttl / 3: the last renewal is at most that long ago
			assertThat(snapshot.lastRenewal()).isAfter(this.clock.now().minus(TTL.dividedBy(3)).minusNanos(1));
			assertThat(snapshot.ttlRemaining()).isGreaterThan(TTL.multipliedBy(2).dividedBy(3).minusNanos(1));
		});
		lease.release();
	}

}
