package dev.distlock.core;

/**
 * The lock store could not be reached or answered with an error, so the lock's state is unknown. The caller holds
 * nothing: a lock call that got no answer may still run in the store, and the engine adopts or deletes what it leaves
 * there. An operation on a held lease may or may not have taken effect.
 *
 * @since 0.1.0
 */
public class LockUnavailableException extends LockException {

	/**
	 * An exception for an operation on {@code key} that could not reach the store.
	 * @param key the lock key as the caller gave it
	 * @param message the detail message
	 * @param cause the client's or the store's error
	 */
	public LockUnavailableException(String key, String message, Throwable cause) {
		super(key, message, cause);
	}

}
