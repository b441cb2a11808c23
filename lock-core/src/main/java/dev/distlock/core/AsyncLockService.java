package dev.distlock.core;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A {@link LockService} that can acquire without blocking the calling thread, for owners that are not threads: a
 * method returning a {@code CompletableFuture}, a reactive stream, a coroutine. Re-entry follows the {@link LockOwner}
 * passed in, not the thread that calls or completes.
 * <p>
 * An engine with a non-blocking client implements it natively; {@link #adapt(LockService, Executor)} gives any other
 * {@link LockService} the same contract by running its blocking calls on an executor.
 *
 * @since 0.6.0
 */
public interface AsyncLockService extends LockService {

	/**
	 * Try to acquire {@code request.key()} for {@code owner}, waiting up to {@code request.waitTime()}, without
	 * blocking the calling thread. If {@code owner} holds the key already, the lease is re-entered.
	 * <p>
	 * Cancelling the returned future abandons the wait; a lease acquired meanwhile is released, never left held.
	 * @param request the key, lease time, wait and renewal of the lease to acquire
	 * @param owner whose hold the lease is, for re-entry
	 * @return a future of the lease, or of empty when the key was not free within the wait; it fails as
	 * {@link #tryAcquire(LockRequest)} would throw
	 */
	CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner);

	/**
	 * {@link #tryAcquireAsync(LockRequest, LockOwner)}, failing with {@link LockAcquisitionTimeoutException} when the
	 * key was not free in time. Cancelling the returned future abandons the wait as cancelling the attempt does.
	 * @param request the key, lease time, wait and renewal of the lease to acquire
	 * @param owner whose hold the lease is, for re-entry
	 * @return a future of the lease
	 */
	default CompletableFuture<Lease> acquireAsync(LockRequest request, LockOwner owner) {
		CompletableFuture<Optional<Lease>> attempt = tryAcquireAsync(request, owner);
		CompletableFuture<Lease> lease = attempt.thenApply(
				acquired -> acquired.orElseThrow(() -> new LockAcquisitionTimeoutException(request.key(), request.waitTime())));
		lease.whenComplete((result, failure) -> {
			// Invariant: a lease granted to a caller who cancelled is released, never left held. The attempt releases
			// one granted after its cancel; one granted just before it (the cancel returns false) never reached the
			// cancelled future, so it is released here.
			if (lease.isCancelled() && !attempt.cancel(false)) {
				attempt.thenAccept((acquired) -> acquired.ifPresent(Lease::releaseAsync));
			}
		});
		return lease;
	}

	/**
	 * {@code service} itself when it acquires asynchronously already, else a view of it that runs each blocking
	 * acquisition (bound to its {@link LockOwner}) and each release on {@code executor}. Size the executor for the
	 * number of acquisitions that may wait at once: each waiting one occupies a thread of it.
	 * @param service the engine
	 * @param executor where blocking calls run; never a Reactor or event-loop thread
	 * @return an asynchronous view of {@code service}
	 */
	static AsyncLockService adapt(LockService service, Executor executor) {
		if (service instanceof AsyncLockService async) {
			return async;
		}
		return new ExecutorAsyncLockService(service, executor);
	}

}
