package dev.distlock.interceptor;

/**
 * A key expression evaluated to null, a blank string or an empty collection for one call. The method was not run:
 * locking on "null" would serialize unrelated calls, and skipping the lock would run them unprotected.
 *
 * @since 0.1.0
 */
public class InvalidLockKeyException extends IllegalArgumentException {

	/**
	 * An exception with the given message.
	 * @param message the detail message, naming the method
	 */
	public InvalidLockKeyException(String message) {
		super(message);
	}

	/**
	 * An exception with the given message and cause.
	 * @param message the detail message, naming the method
	 * @param cause what made the declaration or the key unusable
	 */
	public InvalidLockKeyException(String message, Throwable cause) {
		super(message, cause);
	}

}
