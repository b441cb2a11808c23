package dev.distlock.testing;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.StoredLock;
import dev.distlock.testing.LockHistory.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Permits in the in-memory engine, where the engine contract cannot look: the store's orders (a key held elsewhere, a
 * permit lost now or at its next renewal), the history, the listing's details, the exact end of a permit's lease time,
 * and a waiter whose key became a semaphore of another number while it waited.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InMemoryPermitsTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private final ManualLockClock clock = LockClock.manual();

	private final InMemoryLockStore store = new InMemoryLockStore(this.clock);

	private final List<LockLostEvent> losses = new CopyOnWriteArrayList<>();

	private final InMemoryLockService first = service("app-1");

	private final InMemoryLockService second = service("app-2");

	private InMemoryLockService service(String clientId) {
		return InMemoryLockService.builder(this.store).clientId(clientId).listener(new LockListener() {

			@Override
			public void lost(LockLostEvent event) {
				InMemoryPermitsTests.this.losses.add(event);
			}

		}).build();
	}

	private static LockRequest permits(String key, int permits, Duration wait) {
		return LockRequest.of(key, TTL, wait).permits(permits);
	}

	@Test
	void theHistoryAndTheListingTellOfASemaphoresHolders() {
		Lease one = this.first.acquire(permits("k", 2, Duration.ZERO));
		Lease two = this.second.acquire(permits("k", 2, Duration.ZERO));
		Lease again = this.second.acquire(permits("k", 2, Duration.ZERO));
		CompletableFuture<Optional<Lease>> waiting = this.first.tryAcquireAsync(permits("k", 2, TTL),
				LockOwner.newOwner());
		assertThat(this.store.history().entries("k")).extracting(LockHistory.Entry::mode)
			.containsOnly(LockMode.PERMITS);
		assertThat(this.first.locks(null, 10).locks()).singleElement().satisfies((lock) -> {
			assertThat(lock.mode()).isEqualTo(LockMode.PERMITS);
			assertThat(lock.holds()).isEqualTo(3);
			assertThat(lock.fencingToken()).isEqualTo(two.fencingToken());
			assertThat(lock.waitingInstances()).isEqualTo(1);
			assertThat(lock.queueLength()).isEqualTo(-1);
		});
		assertThat(this.first.holder("k")).hasValueSatisfying((holder) -> assertThat(holder.holds()).isEqualTo(3));
		again.release();
		two.release();
		Lease third = waiting.join().orElseThrow();
		assertThat(third.fencingToken()).isGreaterThan(two.fencingToken());
		assertThat(this.store.history().entries("k")).extracting(LockHistory.Entry::kind)
			.containsExactly(Kind.ACQUIRED, Kind.ACQUIRED, Kind.REENTERED, Kind.WAITING, Kind.RELEASED, Kind.ACQUIRED,
					Kind.RELEASED); // the last release hands the permit on before it is recorded, as for every mode
		third.release();
		one.release();
		assertThat(this.first.locks(null, 10).locks()).isEmpty();
	}

	@Test
	void aFixedPermitEndsExactlyAtItsLeaseTimeAndItsWaiterGetsItThen() {
		Lease fixed = this.first.acquire(LockRequest.of("k", Duration.ofSeconds(5), Duration.ZERO).withFixedLease()
			.permits(1));
		CompletableFuture<Optional<Lease>> waiting = this.second.tryAcquireAsync(permits("k", 1, TTL),
				LockOwner.newOwner());
		this.clock.advance(Duration.ofMillis(4999));
		assertThat(waiting).isNotDone();
		this.clock.advance(Duration.ofMillis(1));
		Lease next = waiting.join().orElseThrow();
		assertThat(next.fencingToken()).isGreaterThan(fixed.fencingToken());
		assertThatExceptionOfType(LockLostException.class).isThrownBy(fixed::release);
		next.release();
	}

	@Test
	void aKeyHeldElsewhereKeepsPermitsOutAndIsRefusedOverPermits() {
		ForeignHold elsewhere = this.store.holdElsewhere("k");
		assertThat(this.first.tryAcquire(permits("k", 3, Duration.ZERO))).isEmpty();
		elsewhere.release();
		Lease permit = this.first.acquire(permits("k", 3, Duration.ZERO));
		assertThatIllegalStateException().isThrownBy(() -> this.store.holdElsewhere("k")).withMessageContaining("'k'");
		permit.release();
	}

	@Test
	void losingASemaphoreLosesEveryPermitAndLetsItsWaitersIn() throws Exception {
		Lease one = this.first.acquire(permits("k", 2, Duration.ZERO));
		Lease two = this.second.acquire(permits("k", 2, Duration.ZERO));
		CompletableFuture<Optional<Lease>> waiting = this.second.tryAcquireAsync(permits("k", 2, TTL),
				LockOwner.newOwner());
		assertThat(this.store.lose("k")).isEqualTo(2);
		assertThat(waiting.get(30, TimeUnit.SECONDS)).isPresent();
		await().atMost(Duration.ofSeconds(30)).until(() -> this.losses.size() == 2);
		assertThat(this.losses).extracting(LockLostEvent::fencingToken)
			.containsExactlyInAnyOrder(one.fencingToken(), two.fencingToken());
		assertThatExceptionOfType(LockLostException.class).isThrownBy(one::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(two::release);
		waiting.join().orElseThrow().release();
	}

	@Test
	void aPermitLostAtItsNextRenewalIsFoundThen() {
		Lease permit = this.first.acquire(permits("k", 2, Duration.ZERO));
		assertThat(this.store.loseAtNextRenewal("k")).isEqualTo(1);
		assertThat(this.losses).isEmpty();
		this.clock.advance(TTL);
		await().atMost(Duration.ofSeconds(30)).until(() -> this.losses.size() == 1);
		assertThat(this.losses.get(0).detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
		assertThat(this.first.activeLeases()).singleElement().satisfies((snapshot) -> {
			assertThat(snapshot.mode()).isEqualTo(LockMode.PERMITS);
			assertThat(snapshot.lost()).isTrue();
		});
		assertThatExceptionOfType(LockLostException.class).isThrownBy(permit::release);
	}

	/**
	 * Two waiters for different numbers of permits queue behind an exclusive lock (nobody holds permits yet, so
	 * neither is refused); at its release the first sets the number, and the other is refused then, as the Redis
	 * engine's waiter is at its next attempt.
	 */
	@Test
	void aWaiterForAnotherNumberThanTheKeyBecameIsRefusedWhenItChanges() {
		Lease exclusive = this.first.acquire(LockRequest.of("k", TTL, Duration.ZERO));
		CompletableFuture<Optional<Lease>> three = this.second.tryAcquireAsync(permits("k", 3, TTL),
				LockOwner.newOwner());
		CompletableFuture<Optional<Lease>> five = this.second.tryAcquireAsync(permits("k", 5, TTL),
				LockOwner.newOwner());
		assertThat(this.second.waitingThreads()).isEqualTo(2);
		exclusive.release();
		Lease permit = three.join().orElseThrow();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> five.get(30, TimeUnit.SECONDS))
			.withCauseInstanceOf(IllegalStateException.class)
			.withMessageContaining("'k' is a semaphore of 3 permits")
			.withMessageContaining("asks for 5 permits");
		assertThat(this.second.waitingThreads()).isZero();
		permit.release();
		StoredLock none = this.first.locks(null, 10).locks().stream().findAny().orElse(null);
		assertThat(none).isNull();
	}

}
