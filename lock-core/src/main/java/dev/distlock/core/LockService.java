package dev.distlock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Hands out reentrant, time-limited leases on named keys, shared by every process that uses the same store and key
 * prefix.
 * <p>
 * A lease belongs to the {@linkplain LockOwner#current() current owner} of the thread that acquired it, by default the
 * thread itself: the same owner acquiring the same key again re-enters it (the hold count grows and the fencing token
 * stays the same), and the lease is freed when every hold has been released. Work that is not confined to a thread
 * uses an owner of its own ({@link LockOwner#newOwner()}, {@link AsyncLockService}). The returned {@link Lease} carries
 * its owner, so it can be released from any thread.
 *
 * @since 0.1.0
 */
public interface LockService {

	/**
	 * Try to acquire {@code request.key()}, waiting up to {@code request.waitTime()} for the current holder to release it.
	 * @param request the key, lease time, wait and renewal of the lease to acquire
	 * @return the lease, or empty when the key was not free within the wait
	 * @throws LockInterruptedException if the thread was interrupted while waiting (its interrupt status is kept)
	 * @throws LockUnavailableException if the store could not be reached until the wait's deadline (attempts that
	 * get no answer are retried within the wait)
	 */
	Optional<Lease> tryAcquire(LockRequest request);

	/**
	 * Try to acquire {@code key} with a lease of {@code ttl} that the watchdog renews while it is held, waiting up to
	 * {@code wait}; {@code wait} of zero tries exactly once.
	 * @param key the lock key
	 * @param ttl the lease time
	 * @param wait the longest time to wait for the key
	 * @return the lease, or empty when the key was not free within the wait
	 * @see #tryAcquire(LockRequest)
	 */
	default Optional<Lease> tryAcquire(String key, Duration ttl, Duration wait) {
		return tryAcquire(LockRequest.of(key, ttl, wait));
	}

	/**
	 * Acquire as {@link #tryAcquire(LockRequest)} does, but fail when the key is not free in time.
	 * @param request the key, lease time, wait and renewal of the lease to acquire
	 * @return the lease
	 * @throws LockAcquisitionTimeoutException if the key was not free within the wait
	 */
	default Lease acquire(LockRequest request) {
		return tryAcquire(request).orElseThrow(() -> new LockAcquisitionTimeoutException(request.key(), request.waitTime()));
	}

	/**
	 * Acquire {@code key} with a lease of {@code ttl} that the watchdog renews while it is held, waiting up to
	 * {@code wait}, and fail when the key is not free in time.
	 * @param key the lock key
	 * @param ttl the lease time
	 * @param wait the longest time to wait for the key
	 * @return the lease
	 * @throws LockAcquisitionTimeoutException if the key was not free within the wait
	 * @see #acquire(LockRequest)
	 */
	default Lease acquire(String key, Duration ttl, Duration wait) {
		return acquire(LockRequest.of(key, ttl, wait));
	}

	/**
	 * Ask the store who holds {@code key} now, in one round trip (redis-py's {@code locked()} with the details).
	 * @param key the lock key
	 * @return the holder's hold count, remaining lease time and fencing token, or empty when the key is free
	 * @throws IllegalArgumentException if {@code key} is blank
	 * @throws LockUnavailableException if the store did not answer
	 */
	Optional<LockHolder> holder(String key);

	/**
	 * The shortest lease time this service keeps through one renewal that goes unanswered until the client gives up on
	 * it: a renewed lease shorter than this is still renewed, but one slow answer from its own server loses it. The
	 * auto-configuration warns at startup about configured lease times below it.
	 * @return the shortest such lease time, or {@link Duration#ZERO} when the service cannot tell (the default)
	 * @since 0.7.0
	 */
	default Duration shortestRenewableTtl() {
		return Duration.ZERO;
	}

	/**
	 * Why this service refuses every request of {@code mode} (with an {@link UnsupportedOperationException} naming the
	 * key), if it does: Redlock takes exclusive locks only, for instance. The annotation's startup check fails the start
	 * for a declaration of such a mode, naming the method and this reason, instead of failing its every call.
	 * @param mode a lock mode
	 * @return the reason, or empty when the service takes requests of {@code mode} (the default)
	 * @since 0.8.0
	 */
	default Optional<String> modeRefusal(LockMode mode) {
		return Optional.empty();
	}

	/**
	 * Ask the store whether anyone holds {@code key} now, in one round trip (redis-py's {@code locked()}).
	 * @param key the lock key
	 * @return true when some owner, in any process, holds the key
	 * @throws IllegalArgumentException if {@code key} is blank
	 * @throws LockUnavailableException if the store did not answer
	 */
	default boolean isLocked(String key) {
		return holder(key).isPresent();
	}

	/**
	 * Run {@code action} while holding the lease, and release it afterwards, also when the action throws.
	 * @param <T> the action's result type
	 * @param request the key, lease time, wait and renewal of the lease to hold
	 * @param action what to run under the lock
	 * @return the action's result
	 * @throws LockAcquisitionTimeoutException if the key was not free within the wait
	 * @throws LockLostException if the lease was lost while the action ran (the action's own exception wins)
	 */
	default <T> T execute(LockRequest request, Supplier<T> action) {
		T result;
		Lease lease = acquire(request);
		try {
			result = action.get();
		}
		catch (RuntimeException | Error ex) {
			try {
				lease.release();
			}
			catch (RuntimeException releaseFailure) {
				ex.addSuppressed(releaseFailure);
			}
			throw ex;
		}
		lease.release();
		return result;
	}

	/**
	 * Run {@code action} while holding a lease of {@code ttl} on {@code key} (renewed by the watchdog), waiting up to
	 * {@code wait} for it, and release it afterwards, also when the action throws.
	 * @param <T> the action's result type
	 * @param key the lock key
	 * @param ttl the lease time
	 * @param wait the longest time to wait for the key
	 * @param action what to run under the lock
	 * @return the action's result
	 * @throws LockAcquisitionTimeoutException if the key was not free within the wait
	 * @see #execute(LockRequest, Supplier)
	 */
	default <T> T execute(String key, Duration ttl, Duration wait, Supplier<T> action) {
		return execute(LockRequest.of(key, ttl, wait), action);
	}

	/**
	 * {@link #execute(LockRequest, Supplier)} for an action without a result.
	 * @param key the lock key
	 * @param ttl the lease time
	 * @param wait the longest time to wait for the key
	 * @param action what to run under the lock
	 * @throws LockAcquisitionTimeoutException if the key was not free within the wait
	 */
	default void run(String key, Duration ttl, Duration wait, Runnable action) {
		execute(LockRequest.of(key, ttl, wait), () -> {
			action.run();
			return null;
		});
	}

}
