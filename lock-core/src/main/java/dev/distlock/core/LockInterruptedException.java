package dev.distlock.core;

/**
 * The waiting thread was interrupted. The thread's interrupt status is set again before this is thrown, so code
 * further up still sees it.
 *
 * @since 0.1.0
 */
public class LockInterruptedException extends LockException {

	/**
	 * An exception for a wait for {@code key} that was interrupted.
	 * @param key the lock key as the caller gave it
	 * @param cause the interruption
	 */
	public LockInterruptedException(String key, InterruptedException cause) {
		super(key, "Interrupted while waiting for lock '" + key + "'", cause);
	}

}
