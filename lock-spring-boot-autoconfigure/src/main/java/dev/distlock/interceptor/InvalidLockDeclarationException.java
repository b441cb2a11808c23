package dev.distlock.interceptor;

/**
 * A {@link dev.distlock.annotation.DistributedLock @DistributedLock} declaration that cannot work: a bad key
 * expression, an unparsable or out-of-range duration, a method a proxy cannot intercept, an asynchronous return type.
 * Thrown while the application context starts, so the mistake never reaches production traffic.
 *
 * @since 0.1.0
 */
public class InvalidLockDeclarationException extends IllegalStateException {

	/**
	 * An exception with the given message.
	 * @param message the detail message, naming the method
	 */
	public InvalidLockDeclarationException(String message) {
		super(message);
	}

	/**
	 * An exception with the given message and cause.
	 * @param message the detail message, naming the method
	 * @param cause what made the declaration or the key unusable
	 */
	public InvalidLockDeclarationException(String message, Throwable cause) {
		super(message, cause);
	}

}
