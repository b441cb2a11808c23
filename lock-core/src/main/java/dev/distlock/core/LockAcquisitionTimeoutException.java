package dev.distlock.core;

import java.time.Duration;

/**
 * The key was held by another owner for the whole wait. Web applications usually answer it with 409 Conflict; a
 * caller that can wait longer may retry it, as every {@link TransientLockException}.
 *
 * @since 0.1.0
 */
public class LockAcquisitionTimeoutException extends TransientLockException {

	/** How long the caller waited. */
	private final Duration waitTime;

	/**
	 * An exception with the standard message, naming the key and the wait.
	 * @param key the lock key as the caller gave it
	 * @param waitTime how long the caller waited
	 */
	public LockAcquisitionTimeoutException(String key, Duration waitTime) {
		this(key, waitTime, "Could not acquire lock '" + key + "' within " + waitTime.toMillis() + "ms: it is held by another owner");
	}

	/**
	 * An exception with a message of the caller's.
	 * @param key the lock key as the caller gave it
	 * @param waitTime how long the caller waited
	 * @param message the detail message
	 */
	public LockAcquisitionTimeoutException(String key, Duration waitTime, String message) {
		super(key, message, null);
		this.waitTime = waitTime;
	}

	/** {@return how long the caller waited} */
	public Duration getWaitTime() {
		return this.waitTime;
	}

}
