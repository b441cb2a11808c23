package dev.distlock.interceptor;

/**
 * A {@link dev.distlock.annotation.DistributedLock @DistributedLock} declaration that cannot work: a bad key
 * expression, an unparsable or out-of-range duration, a failure handler that is no {@code LockFailureHandler} bean, a
 * method a proxy cannot intercept, an asynchronous return type.
 * Thrown while the application context starts, so the mistake never reaches production traffic.
 *
 * @since 0.1.0
 */
public class InvalidLockDeclarationException extends IllegalStateException {

	public InvalidLockDeclarationException(String message) {
		super(message);
	}

	public InvalidLockDeclarationException(String message, Throwable cause) {
		super(message, cause);
	}

}
