package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Asynchronous acquisition ({@link AsyncLockService}): no thread waits, re-entry follows the {@link LockOwner} passed in,
 * and cancelling a waiting acquisition abandons it without leaving a lease held.
 */
abstract class AsynchronousTests extends MaxHoldTests {


	private AsyncLockService asyncInstance() {
		LockService service = instance();
		assumeTrue(service instanceof AsyncLockService, "the engine does not acquire asynchronously");
		return (AsyncLockService) service;
	}

	/** A waiting asynchronous acquisition is completed by another instance's release, long before the lease time. */
	@Test
	void aWaitingAcquisitionIsCompletedByARelease() throws Exception {
		String key = key("async");
		AsyncLockService first = asyncInstance();
		AsyncLockService second = asyncInstance();
		Lease held = first.acquire(key, LONG_TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = second.tryAcquireAsync(request(key, LONG_TTL, LONG_WAIT),
				LockOwner.newOwner());
		awaitWaiting(second, 1, waiting);
		assertStaysUndone(waiting);
		held.release();
		Lease lease = get(waiting).orElseThrow();
		assertThat(lease.fencingToken()).isGreaterThan(held.fencingToken());
		lease.releaseAsync().get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(first.isLocked(key)).isFalse();
	}

	/** Asynchronous acquisitions of two instances, each for an owner of its own, exclude each other. */
	@Test
	void asynchronousAcquisitionsExcludeEachOther() throws Exception {
		String key = key("async-counter");
		List<AsyncLockService> instances = List.of(asyncInstance(), asyncInstance());
		AtomicInteger counter = new AtomicInteger();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		ExecutorService work = Executors.newFixedThreadPool(2);
		try {
			List<CompletableFuture<Void>> all = new ArrayList<>();
			for (int i = 0; i < 40; i++) {
				AsyncLockService service = instances.get(i % 2);
				all.add(service.acquireAsync(request(key, LONG_TTL, LONG_WAIT), LockOwner.newOwner())
					.thenApplyAsync((lease) -> {
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						int read = counter.get();
						Thread.yield();
						counter.set(read + 1);
						inside.decrementAndGet();
						return lease;
					}, work)
					.thenCompose(Lease::releaseAsync));
			}
			get(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)), STRESS_DEADLINE);
		}
		finally {
			work.shutdownNow();
		}
		assertThat(overlaps).hasValue(0);
		assertThat(counter).hasValue(40);
		awaitFree(instances.get(0), key);
	}

	/** The owner passed in re-enters its lease, from whatever thread; another owner does not. */
	@Test
	void theOwnerPassedInReentersItsLease() {
		String key = key("async-owner");
		AsyncLockService service = asyncInstance();
		LockOwner owner = LockOwner.newOwner();
		Lease outer = get(service.tryAcquireAsync(request(key, LONG_TTL, Duration.ZERO), owner)).orElseThrow();
		Lease inner = get(inBackground(
				() -> get(service.tryAcquireAsync(request(key, LONG_TTL, Duration.ZERO), owner)).orElseThrow()));
		assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
		assertThat(get(service.tryAcquireAsync(request(key, LONG_TTL, Duration.ZERO), LockOwner.newOwner())))
			.as("another owner").isEmpty();
		get(inner.releaseAsync());
		assertThat(service.isLocked(key)).isTrue();
		get(outer.releaseAsync());
		assertThat(service.isLocked(key)).isFalse();
	}

	/** Cancelling a waiting acquisition abandons its wait: it never gets the key, which goes to the next one. */
	@Test
	void cancellingAWaitingAcquisitionAbandonsIt() {
		String key = key("cancelled");
		LockService holder = instance();
		AsyncLockService waiter = asyncInstance();
		Lease held = holder.acquire(key, LONG_TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = waiter.tryAcquireAsync(request(key, LONG_TTL, LONG_WAIT),
				LockOwner.newOwner());
		awaitWaiting(waiter, 1, waiting);
		assertThat(waiting.cancel(true)).isTrue();
		awaitWaiting(waiter, 0, null);
		held.release();
		awaitFree(holder, key);
		Lease next = instance().acquire(key, LONG_TTL, Duration.ZERO);
		assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
		next.release();
	}

	/**
	 * Cancels racing with the release that hands the key to the cancelled acquisition: whichever wins, no lease is
	 * left held.
	 */
	@Test
	void aLeaseGrantedToACancelledAcquisitionIsReleased() throws Exception {
		String key = key("cancel-race");
		LockService holder = instance();
		AsyncLockService waiter = asyncInstance();
		for (int round = 0; round < 20; round++) {
			Lease held = holder.acquire(key, LONG_TTL, PATIENCE);
			CompletableFuture<Lease> waiting = waiter.acquireAsync(request(key, LONG_TTL, LONG_WAIT),
					LockOwner.newOwner());
			awaitWaiting(waiter, 1, waiting);
			CountDownLatch go = new CountDownLatch(1);
			var release = inBackground(() -> {
				go.await();
				held.release();
				return null;
			});
			var cancel = inBackground(() -> {
				go.await();
				return waiting.cancel(true);
			});
			go.countDown();
			get(release);
			if (!get(cancel)) {
				get(waiting).release(); // the release won: the lease is the caller's, who releases it
			}
			awaitFree(holder, key);
		}
	}

	/** An asynchronous wait for a key that stays held ends at its deadline: empty, or a timeout for {@code acquireAsync}. */
	@Test
	void anAsynchronousWaitEndsAtItsDeadline() throws Exception {
		String key = key("async-deadline");
		LockService holder = instance();
		AsyncLockService waiter = asyncInstance();
		Lease held = holder.acquire(key, LONG_TTL, Duration.ZERO);
		Duration wait = shortTtl();
		CompletableFuture<Optional<Lease>> waiting = waiter.tryAcquireAsync(request(key, LONG_TTL, wait),
				LockOwner.newOwner());
		CompletableFuture<Lease> failing = waiter.acquireAsync(request(key, LONG_TTL, wait), LockOwner.newOwner());
		if (timeIsControlled()) {
			awaitWaiting(waiter, 2, waiting);
			passTime(wait.minusMillis(1));
			assertStaysUndone(waiting);
			passTime(Duration.ofMillis(1));
		}
		else {
			passTime(wait);
		}
		assertThat(get(waiting)).isEmpty();
		assertThatExceptionOfType(ExecutionException.class)
			.isThrownBy(() -> failing.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS))
			.withCauseInstanceOf(LockAcquisitionTimeoutException.class);
		held.release();
	}

}
