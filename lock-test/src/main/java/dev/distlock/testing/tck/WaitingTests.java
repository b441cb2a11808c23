package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;

import dev.distlock.core.Lease;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Waits: zero tries once; a wait ends at its deadline, on the holder's release, on an interrupt, or a dead holder's expiry. */
abstract class WaitingTests extends ReentryTests {


	/** A wait for a key that stays held ends empty-handed at its deadline, and not before. */
	@Test
	void aWaitEndsAtItsDeadline() {
		String key = key("deadline");
		LockService holder = instance();
		LockService waiter = instance();
		Lease held = holder.acquire(key, LONG_TTL, Duration.ZERO);
		Duration wait = shortTtl();
		long start = System.nanoTime();
		Future<Optional<Lease>> waiting = inBackground(() -> waiter.tryAcquire(key, LONG_TTL, wait));
		if (timeIsControlled()) {
			awaitWaiting(waiter, 1, waiting);
			passTime(wait.minusMillis(1));
			assertStaysUndone(waiting);
			passTime(Duration.ofMillis(1));
		}
		else {
			passTime(wait);
		}
		assertThat(get(waiting)).isEmpty();
		if (!timeIsControlled()) {
			assertThat(Duration.ofNanos(System.nanoTime() - start)).as("time waited").isGreaterThanOrEqualTo(wait);
		}
		assertThat(held.isHeld()).isTrue();
		held.release();
	}

	/** A wait of zero tries once and tells the listeners that the key stayed held (no failure). */
	@Test
	void aZeroWaitTriesOnce() {
		String key = key("once");
		List<@Nullable RuntimeException> notAcquired = new CopyOnWriteArrayList<>();
		LockService waiter = instance(new LockServiceTck.Options(List.of(new LockListener() {

			@Override
			public void notAcquired(LockRequest request, Duration waited, @Nullable RuntimeException failure) {
				notAcquired.add(failure);
			}

		}), null));
		Lease held = instance().acquire(key, LONG_TTL, Duration.ZERO);
		// on a clock of the test's no time passes: a wait would never end
		assertThat(get(inBackground(() -> waiter.tryAcquire(key, LONG_TTL, Duration.ZERO)))).isEmpty();
		assertThat(notAcquired).containsExactly((RuntimeException) null);
		held.release();
		assertThat(waiter.tryAcquire(key, LONG_TTL, Duration.ZERO)).hasValueSatisfying(Lease::release);
	}

	/** A waiter is woken by the holder's release, long before the holder's lease time would free the key. */
	@Test
	void aReleaseEndsTheWait() {
		String key = key("woken");
		LockService holder = instance();
		LockService waiter = instance();
		Lease held = holder.acquire(key, LONG_TTL, Duration.ZERO);
		Future<Optional<Lease>> waiting = inBackground(() -> waiter.tryAcquire(key, LONG_TTL, LONG_WAIT));
		awaitWaiting(waiter, 1, waiting);
		assertStaysUndone(waiting);
		held.release();
		Optional<Lease> lease = get(waiting);
		assertThat(lease).isPresent();
		assertThat(lease.get().fencingToken()).isGreaterThan(held.fencingToken());
		lease.get().release();
	}

	/**
	 * An interrupt ends the wait at once with {@link LockInterruptedException}, the thread's interrupt status kept; the
	 * interrupted caller does not get the key later.
	 */
	@Test
	void anInterruptEndsTheWaitAndKeepsTheInterruptStatus() throws Exception {
		String key = key("interrupted");
		LockService holder = instance();
		LockService waiter = instance();
		Lease held = holder.acquire(key, LONG_TTL, Duration.ZERO);
		CompletableFuture<@Nullable Throwable> failure = new CompletableFuture<>();
		CompletableFuture<Boolean> interruptStatus = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				waiter.tryAcquire(key, LONG_TTL, LONG_WAIT).ifPresent(Lease::release);
				failure.complete(null);
			}
			catch (RuntimeException ex) {
				failure.complete(ex);
			}
			interruptStatus.complete(Thread.currentThread().isInterrupted());
		}, "tck-interrupted-waiter");
		thread.setDaemon(true);
		thread.start();
		awaitWaiting(waiter, 1, failure);
		thread.interrupt();
		assertThat(get(failure)).isInstanceOf(LockInterruptedException.class).hasMessageContaining(key);
		assertThat(get(interruptStatus)).isTrue();
		awaitWaiting(waiter, 0, null);
		held.release();
		LockService other = instance();
		assertThat(other.tryAcquire(key, LONG_TTL, Duration.ZERO)).as("the key, free after the release")
			.hasValueSatisfying(Lease::release);
	}

	/**
	 * An instance that crashes while holding a key blocks the others until the lease's time runs out (not before, where
	 * the test controls time), and the next holder has a greater fencing token.
	 */
	@Test
	void aDeadHoldersLeaseBlocksTheKeyForAtMostItsTtl() {
		String key = key("orphan");
		Duration ttl = shortTtl();
		LockService doomed = instance();
		LockService survivor = instance();
		Lease abandoned = doomed.acquire(key, ttl, Duration.ZERO);
		crash(doomed);
		Future<Optional<Lease>> next = inBackground(() -> survivor.tryAcquire(key, LONG_TTL, LONG_WAIT));
		if (timeIsControlled()) {
			awaitWaiting(survivor, 1, next);
			passTime(ttl.minusMillis(1));
			assertStaysUndone(next);
			passTime(Duration.ofMillis(1));
		}
		else {
			passTime(ttl);
		}
		Optional<Lease> lease = get(next);
		assertThat(lease).isPresent();
		assertThat(lease.get().fencingToken()).isGreaterThan(abandoned.fencingToken());
		lease.get().release();
	}

}
