package dev.distlock.annotation;

/**
 * What a {@link DistributedLock @DistributedLock} call does when the lock is not acquired within its wait.
 *
 * @since 0.1.0
 */
public enum OnLockFailure {

	/** Throw {@link dev.distlock.core.LockAcquisitionTimeoutException} (web applications map it to 409). */
	THROW,

	/**
	 * Skip the call and return {@code null} (or an empty {@code Optional}, or {@code false} / zero for primitives):
	 * for scheduled jobs that only one instance needs to run.
	 */
	SKIP

}
