package dev.distlock.redis.internal.single;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;

import dev.distlock.core.LockListener;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.wait.ReleaseSubscriber;
import org.jspecify.annotations.Nullable;

/**
 * What asynchronous acquisitions ({@link AsyncAcquisition}) work with: the acquirer (entries, leases, owner ids), the
 * re-entry of a held lease, the acquire call, the engine's roles, the small bounded pool that makes blocking calls and
 * applies replies, and the scheduler of their timers (one thread that never waits on Redis).
 */
public record AsyncEngine(LeaseAcquirer acquirer, LeaseReentry reentry, AcquireCall acquireCall, LeaseStore store,
		ReleaseSubscriber subscriber, LeaseWatchdog watchdog, LeaseRegistry registry, HoldReconciler reconciler,
		List<LockListener> listeners, Executor calls, ScheduledExecutorService timers) {

	/**
	 * Run {@code work} on the call pool, then {@code then} with its result or failure, on the same thread; false when
	 * the pool is shut down (the service closed) and nothing runs.
	 */
	<T> boolean call(CallWork<T> work, Reply<T> then) {
		try {
			this.calls.execute(() -> {
				T value;
				try {
					value = work.run();
				}
				catch (RuntimeException | InterruptedException ex) {
					then.apply(null, ex);
					return;
				}
				then.apply(value, null);
			});
			return true;
		}
		catch (RejectedExecutionException ex) {
			return false;
		}
	}

	/**
	 * Send {@code attempt}'s acquire call, then {@code then} with its reply or failure on the call pool: on Lettuce's
	 * asynchronous commands where available, else as a blocking call on the pool. The reply is applied on the pool,
	 * never on Lettuce's event loop: it runs listeners and completes the caller's future, whose continuations may be
	 * slow or call Redis themselves. {@code closed} runs instead when the pool is shut down (the service closed).
	 */
	void sendAttempt(LockRequest request, Attempt attempt, boolean mayWait, Reply<long[]> then, Runnable closed) {
		CompletableFuture<long[]> sentAsync = this.acquireCall.callAsync(request, attempt, mayWait);
		if (sentAsync == null) {
			if (!call(() -> this.acquireCall.call(request, attempt, mayWait), then)) {
				closed.run();
			}
			return;
		}
		sentAsync.whenComplete((reply, failure) -> {
			if (!call(() -> {
				if (failure != null) {
					throw (failure instanceof LockUnavailableException unavailable) ? unavailable
							: (failure instanceof RequestRefused refused) ? refused : new IllegalStateException(failure);
				}
				return reply;
			}, then)) {
				closed.run();
			}
		});
	}

	/** Work that one call makes, on a pool thread. */
	@FunctionalInterface
	interface CallWork<T> {

		@Nullable T run() throws InterruptedException;

	}

	/** What follows a call: its value, or its failure. */
	@FunctionalInterface
	interface Reply<T> {

		void apply(@Nullable T value, @Nullable Exception ex);

	}

}
