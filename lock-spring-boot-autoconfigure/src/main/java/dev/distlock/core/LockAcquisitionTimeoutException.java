package dev.distlock.core;

import java.time.Duration;

/**
 * The key was held by another owner for the whole wait. Web applications usually answer it with 409 Conflict; a
 * caller that can wait longer may retry it, as every {@link TransientLockException}.
 *
 * @since 0.1.0
 */
public class LockAcquisitionTimeoutException extends TransientLockException {

	private final Duration waitTime;

	public LockAcquisitionTimeoutException(String key, Duration waitTime) {
		this(key, waitTime, "Could not acquire lock '" + key + "' within " + waitTime.toMillis() + "ms: it is held by another owner");
	}

	public LockAcquisitionTimeoutException(String key, Duration waitTime, String message) {
		super(key, message, null);
		this.waitTime = waitTime;
	}

	/** How long the caller waited. */
	public Duration getWaitTime() {
		return this.waitTime;
	}

}
