package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;

import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;

/**
 * One annotated method's lock, parsed and validated once: what the interceptor needs on every call.
 *
 * @param method the annotated method as declared on the target class (its parameter names bind the key expression)
 * @param description {@code ClassName.method(..)}, for messages
 * @param keyExpression the parsed key expression
 * @param keySource the key expression as written
 * @param name the metrics name
 * @param ttl the lease time
 * @param waitTime how long to wait for the lock
 * @param fixedLease whether the lease is never renewed
 * @param onFailure what to do when the lock is not acquired in time ({@code THROW} when there is a failure handler)
 * @param failureHandler the name of the {@code LockFailureHandler} bean, if any
 * @param holdAtLeast the shortest time between two acquisitions of the key by {@code holdAtLeast} calls, or null for
 * none
 * @param mode how the lock admits holders (exclusive, fair, read, write or permits)
 * @param maxHold the longest hold of each lease of a call (the declaration's, else the default one), or null for none;
 * at least {@code ttl}
 * @param permits how many holders the key admits at once: from 1 to {@link LockSettings#MAX_PERMITS} for
 * {@link LockMode#PERMITS}, 1 for every other mode
 * @since 0.1.0
 */
public record LockOperation(Method method, String description, Expression keyExpression, String keySource, String name,
		Duration ttl, Duration waitTime, boolean fixedLease, OnLockFailure onFailure, @Nullable String failureHandler,
		@Nullable Duration holdAtLeast, LockMode mode, @Nullable Duration maxHold, int permits) {

	/**
	 * Checks that {@code permits} fits {@code mode}, as the requests made from this operation will: a mismatch fails
	 * here, when the operation is made, rather than on a call.
	 * @param method the annotated method
	 * @param description {@code ClassName.method(..)}
	 * @param keyExpression the parsed key expression
	 * @param keySource the key expression as written
	 * @param name the metrics name
	 * @param ttl the lease time
	 * @param waitTime how long to wait for the lock
	 * @param fixedLease whether the lease is never renewed
	 * @param onFailure what to do when the lock is not acquired in time
	 * @param failureHandler the name of the {@code LockFailureHandler} bean, if any
	 * @param holdAtLeast the {@code holdAtLeast} window, or null for none
	 * @param mode how the lock admits holders
	 * @param maxHold the longest hold of each lease of a call, or null for none
	 * @param permits how many holders the key admits at once
	 * @throws IllegalArgumentException naming the method when {@code permits} breaks
	 * {@link LockSettings#permitsRule the rule} of {@code mode}
	 */
	public LockOperation {
		LockSettings.checkPermits(permits, mode, "'permits' of " + description);
	}

	/**
	 * An operation of one holder at a time (the form before permits existed).
	 * @param method the annotated method
	 * @param description {@code ClassName.method(..)}
	 * @param keyExpression the parsed key expression
	 * @param keySource the key expression as written
	 * @param name the metrics name
	 * @param ttl the lease time
	 * @param waitTime how long to wait for the lock
	 * @param fixedLease whether the lease is never renewed
	 * @param onFailure what to do when the lock is not acquired in time
	 * @param failureHandler the name of the {@code LockFailureHandler} bean, if any
	 * @param holdAtLeast the {@code holdAtLeast} window, or null for none
	 * @param mode how the lock admits holders
	 * @param maxHold the longest hold of each lease of a call, or null for none
	 * @since 0.7.0
	 */
	public LockOperation(Method method, String description, Expression keyExpression, String keySource, String name,
			Duration ttl, Duration waitTime, boolean fixedLease, OnLockFailure onFailure,
			@Nullable String failureHandler, @Nullable Duration holdAtLeast, LockMode mode,
			@Nullable Duration maxHold) {
		this(method, description, keyExpression, keySource, name, ttl, waitTime, fixedLease, onFailure, failureHandler,
				holdAtLeast, mode, maxHold, 1);
	}

	/**
	 * An operation without a longest hold (the form before {@code maxHold} existed).
	 * @param method the annotated method
	 * @param description {@code ClassName.method(..)}
	 * @param keyExpression the parsed key expression
	 * @param keySource the key expression as written
	 * @param name the metrics name
	 * @param ttl the lease time
	 * @param waitTime how long to wait for the lock
	 * @param fixedLease whether the lease is never renewed
	 * @param onFailure what to do when the lock is not acquired in time
	 * @param failureHandler the name of the {@code LockFailureHandler} bean, if any
	 * @param holdAtLeast the {@code holdAtLeast} window, or null for none
	 * @param mode how the lock admits holders
	 */
	public LockOperation(Method method, String description, Expression keyExpression, String keySource, String name,
			Duration ttl, Duration waitTime, boolean fixedLease, OnLockFailure onFailure,
			@Nullable String failureHandler, @Nullable Duration holdAtLeast, LockMode mode) {
		this(method, description, keyExpression, keySource, name, ttl, waitTime, fixedLease, onFailure, failureHandler,
				holdAtLeast, mode, null);
	}

	/**
	 * How the holder label describes an invocation's own owner: {@code kind} and the method as
	 * {@code SimpleClassName.method}, from the target class {@link #description()} names (for example
	 * {@code async InventoryService.reserve}).
	 */
	String ownerDescription(String kind) {
		String methodName = this.method.getName();
		int at = this.description.indexOf("." + methodName + "(");
		String className = (at > 0) ? this.description.substring(0, at) : this.method.getDeclaringClass().getName();
		return kind + " " + ClassUtils.getShortName(className) + "." + methodName;
	}

	/** {@return the request for {@code key} with this operation's settings and {@code waitTime}} */
	LockRequest request(String key, Duration waitTime) {
		return new LockRequest(key, this.ttl, waitTime, !this.fixedLease, this.name, this.mode, this.maxHold,
				this.permits);
	}

}
