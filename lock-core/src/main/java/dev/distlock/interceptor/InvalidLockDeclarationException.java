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

	/** The method at fault, or null when made from a message only. */
	private final @Nullable String method;

	/** The annotation attribute at fault, or null when it is the method itself. */
	private final @Nullable String attribute;

	/** What is wrong, without the method. */
	private final String problem;

	/**
	 * A declaration problem told in one message, when there is no single method or attribute to name.
	 * @param message what is wrong
	 */
	public InvalidLockDeclarationException(String message) {
		this(message, (Throwable) null);
	}

	/**
	 * A declaration problem told in one message, with what it was found with.
	 * @param message what is wrong
	 * @param cause what the problem was found with, or {@code null}
	 */
	public InvalidLockDeclarationException(String message, @Nullable Throwable cause) {
		super(message, cause);
		this.method = null;
		this.attribute = null;
		this.problem = message;
	}

	/**
	 * A problem of one method's declaration, with the attribute at fault.
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

	/**
	 * The method whose declaration is at fault, or {@code null} when the exception was made from a message only.
	 * @return the method, or {@code null}
	 */
	public @Nullable String getMethod() {
		return this.method;
	}

	/**
	 * The {@code @DistributedLock} attribute at fault ({@code key}, {@code ttl}, {@code waitTime},
	 * {@code failureHandler}), or {@code null} when it is the method itself (its visibility or return type).
	 * @return the attribute, or {@code null}
	 */
	public @Nullable String getAttribute() {
		return this.attribute;
	}

	/**
	 * What is wrong, without the method.
	 * @return the problem as a sentence
	 */
	public String getProblem() {
		return this.problem;
	}

}
