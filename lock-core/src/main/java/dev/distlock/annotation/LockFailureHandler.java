package dev.distlock.annotation;

import org.jspecify.annotations.Nullable;

/**
 * Decides the outcome of a {@link DistributedLock @DistributedLock} call that did not get its lock in time: return a
 * value in place of the method's, or throw. Declared as a bean and named by {@link DistributedLock#failureHandler()}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface LockFailureHandler {

	/**
	 * Decide what a call that did not get its lock returns or throws; the method itself is not run.
	 * @param failure the call, its key and why the lock was not acquired
	 * @return the value the call returns instead (must fit the method's return type)
	 * @throws RuntimeException to fail the call
	 */
	@Nullable Object onLockFailure(LockFailure failure);

}
