package dev.distlock.interceptor;

import org.jspecify.annotations.Nullable;

/**
 * A {@link dev.distlock.annotation.DistributedLock @DistributedLock} declaration that cannot work: a bad key
 * expression, an unparsable or out-of-range duration, a failure handler that is no {@code LockFailureHandler} bean, a
 * method a proxy cannot intercept, an asynchronous return type.
 * Thrown while the application context starts, so the mistake never reaches production traffic. It names the method,
 * the attribute at fault and the problem separately, for the failure report of Spring Boot's start.
 *
 * @since 0.1.0
 */
public class InvalidLockDeclarationException extends IllegalStateException {

	private final @Nullable String method;

	private final @Nullable String attribute;

	private final String problem;

	public InvalidLockDeclarationException(String message) {
		this(message, (Throwable) null);
	}

	public InvalidLockDeclarationException(String message, @Nullable Throwable cause) {
		super(message, cause);
		this.method = null;
		this.attribute = null;
		this.problem = message;
	}

	/**
	 * @param method the declaring class, the method and its parameter types, as in
	 * {@code com.acme.Inventory.purchase(String, int)}
	 * @param attribute the annotation attribute at fault, or {@code null} when the method itself is
	 * @param problem what is wrong, as a sentence that follows the method in the message
	 * @param cause what the problem was found with (a SpEL parse error, say), or {@code null}
	 */
	public InvalidLockDeclarationException(String method, @Nullable String attribute, String problem,
			@Nullable Throwable cause) {
		super(method + ": " + problem, cause);
		this.method = method;
		this.attribute = attribute;
		this.problem = problem;
	}

	/** The method whose declaration is at fault, or {@code null} when the exception was made from a message only. */
	public @Nullable String getMethod() {
		return this.method;
	}

	/**
	 * The {@code @DistributedLock} attribute at fault ({@code key}, {@code ttl}, {@code waitTime},
	 * {@code failureHandler}), or {@code null} when it is the method itself (its visibility or return type).
	 */
	public @Nullable String getAttribute() {
		return this.attribute;
	}

	/** What is wrong, without the method. */
	public String getProblem() {
		return this.problem;
	}

}
