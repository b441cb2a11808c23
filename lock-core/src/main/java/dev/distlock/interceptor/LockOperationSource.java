package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.function.Function;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.core.LockSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

/**
 * Turns {@link DistributedLock @DistributedLock} declarations into {@link LockOperation}s: once per method and target
 * class, cached, with every check done at that moment so that a mistake fails the application's start rather than a
 * call. The one exception is the {@link DistributedLock#failureHandler() failure handler} bean, checked by
 * {@link #validateFailureHandlers()} once every singleton exists, when the bean factory can tell its type. The
 * annotation is looked up as a merged annotation (meta-annotations and {@code @AliasFor} work) on the most specific
 * method first, then on the method as invoked (an interface method).
 *
 * @since 0.1.0
 */
public class LockOperationSource {

	private static final Object NO_OPERATION = new Object();

	private final Map<MethodClassKey, Object> cache = new ConcurrentHashMap<>(256);

	private final LockKeyEvaluator evaluator;

	private final @Nullable BeanFactory beanFactory;

	/** Operations parsed before {@link #validateFailureHandlers()} whose handler is still to be checked. */
	private final Queue<LockOperation> uncheckedFailureHandlers = new ConcurrentLinkedQueue<>();

	private volatile boolean failureHandlersCheckable;

	private final @Nullable StringValueResolver valueResolver;

	private final Duration defaultTtl;

	private final Duration defaultWaitTime;

	private final @Nullable Duration defaultMaxHold;

	/**
	 * A source that parses each method's annotation once, with the given defaults.
	 * @param beanFactory resolves {@code @bean} references in keys (checked at startup), or null
	 * @param valueResolver resolves {@code ${...}} placeholders in durations, or null
	 * @param defaultTtl the lease time of declarations that give none, at least 1ms
	 * @param defaultWaitTime the wait of declarations that give none, not negative
	 */
	public LockOperationSource(@Nullable BeanFactory beanFactory, @Nullable StringValueResolver valueResolver,
			Duration defaultTtl, Duration defaultWaitTime) {
		this(beanFactory, valueResolver, defaultTtl, defaultWaitTime, null);
	}

	/**
	 * A source that parses each method's annotation once, with the given defaults.
	 * @param beanFactory resolves {@code @bean} references in keys (checked at startup), or null
	 * @param valueResolver resolves {@code ${...}} placeholders in durations, or null
	 * @param defaultTtl the lease time of declarations that give none, at least 1ms
	 * @param defaultWaitTime the wait of declarations that give none, not negative
	 * @param defaultMaxHold the longest hold of declarations that give none, or null for none; at least 1ms, at most
	 * 365 days, and checked against each such declaration's lease time when it is parsed
	 * @since 0.7.0
	 */
	public LockOperationSource(@Nullable BeanFactory beanFactory, @Nullable StringValueResolver valueResolver,
			Duration defaultTtl, Duration defaultWaitTime, @Nullable Duration defaultMaxHold) {
		// checked here, once, so that a declaration that falls back to a default needs no range check of its own
		LockSettings.checkTtl(defaultTtl, "'defaultTtl'");
		LockSettings.checkWaitTime(defaultWaitTime, "'defaultWaitTime'");
		if (defaultMaxHold != null) {
			LockSettings.checkTtl(defaultMaxHold, "'defaultMaxHold'");
		}
		this.defaultMaxHold = defaultMaxHold;
		this.evaluator = new LockKeyEvaluator(beanFactory);
		this.beanFactory = beanFactory;
		this.valueResolver = valueResolver;
		this.defaultTtl = defaultTtl;
		this.defaultWaitTime = defaultWaitTime;
	}

	LockKeyEvaluator evaluator() {
		return this.evaluator;
	}

	/**
	 * The lock operations parsed so far: once the application has started, those of every locked method of its beans
	 * (each bean class is validated, and so parsed, when the bean is created).
	 * @return the operations, in no particular order
	 * @since 0.7.0
	 */
	public List<LockOperation> operations() {
		List<LockOperation> operations = new ArrayList<>();
		for (Object cached : this.cache.values()) {
			if (cached instanceof LockOperation operation) {
				operations.add(operation);
			}
		}
		return operations;
	}

	/**
	 * The operation of {@code method} invoked on {@code targetClass}, or null if it is not annotated.
	 * @param method the method called
	 * @param targetClass the class of the object it is called on, or {@code null} for the declaring class
	 * @return the operation, cached per method and target class
	 */
	public @Nullable LockOperation getOperation(Method method, @Nullable Class<?> targetClass) {
		if (method.getDeclaringClass() == Object.class) {
			return null;
		}
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		Object cached = this.cache.get(cacheKey);
		if (cached == null) {
			LockOperation operation = compute(method, targetClass);
			cached = (operation != null) ? operation : NO_OPERATION;
			this.cache.put(cacheKey, cached);
		}
		return (cached instanceof LockOperation operation) ? operation : null;
	}

	/**
	 * Parse every annotated method of {@code targetClass} and its interfaces, failing on the first declaration that
	 * cannot work, including annotated methods that a proxy cannot intercept (private, final, static).
	 * @param targetClass the bean class
	 * @return whether the class has any annotated method
	 */
	public boolean validateClass(Class<?> targetClass) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		List<Method> annotated = annotatedMethods(userClass);
		for (Method method : annotated) {
			int modifiers = method.getModifiers();
			String problem = Modifier.isPrivate(modifiers) ? "private" : Modifier.isStatic(modifiers) ? "static"
					: (Modifier.isFinal(modifiers) && !method.getDeclaringClass().isInterface()) ? "final" : null;
			if (problem != null) {
				throw new InvalidLockDeclarationException(describe(method, userClass), null, "@DistributedLock on a "
						+ problem + " method has no effect, because a Spring proxy cannot intercept it", null);
			}
			getOperation(method, userClass);
		}
		return !annotated.isEmpty();
	}

	/**
	 * The annotated methods of {@code userClass} (its own and inherited ones) and of its interfaces.
	 * @param userClass the bean's class, not a proxy's
	 * @return the methods, the class's first
	 */
	static List<Method> annotatedMethods(Class<?> userClass) {
		List<Method> annotated = new ArrayList<>();
		// Kotlin compiles an open suspend function's body into a static <name>$suspendImpl that carries its annotations
		ReflectionUtils.doWithMethods(userClass, annotated::add,
				method -> AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class)
						&& !(Modifier.isStatic(method.getModifiers()) && method.getName().endsWith("$suspendImpl")));
		for (Class<?> ifc : ClassUtils.getAllInterfacesForClassAsSet(userClass)) {
			for (Method method : ifc.getMethods()) {
				if (AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class)) {
					annotated.add(method);
				}
			}
		}
		return annotated;
	}

	/**
	 * Check that the failure handler of every operation parsed so far names a {@link LockFailureHandler} bean, and
	 * from now on check each operation's as it is parsed. Called once every singleton exists: while beans are still
	 * being created, a handler defined later in the configuration, or by a factory bean, may not be known by its type
	 * yet. A lazy handler is not created by the check.
	 * @throws InvalidLockDeclarationException naming the method and the handler, for the first one that is missing or
	 * of another type
	 */
	public void validateFailureHandlers() {
		this.failureHandlersCheckable = true;
		checkFailureHandlers();
	}

	private void checkFailureHandlers() {
		LockOperation operation;
		while ((operation = this.uncheckedFailureHandlers.poll()) != null) {
			checkFailureHandler(operation);
		}
	}

	private void checkFailureHandler(LockOperation operation) {
		String name = operation.failureHandler();
		if (name == null || this.beanFactory == null) {
			return;
		}
		String problem = "@DistributedLock attribute 'failureHandler' names bean '" + name + "', which ";
		if (!this.beanFactory.containsBean(name)) {
			throw new InvalidLockDeclarationException(operation.description(), "failureHandler", problem + "does not exist",
					null);
		}
		// a type that is a supertype of the handler's (a lazy bean declared as Object) is only known when it is made
		Class<?> type = this.beanFactory.getType(name, false);
		if (type != null && !LockFailureHandler.class.isAssignableFrom(type)
				&& !type.isAssignableFrom(LockFailureHandler.class)) {
			throw new InvalidLockDeclarationException(operation.description(), "failureHandler", problem + "is a "
					+ type.getName() + ", not a " + LockFailureHandler.class.getName(), null);
		}
	}

	private @Nullable LockOperation compute(Method method, @Nullable Class<?> targetClass) {
		Method specific = (targetClass != null) ? AopUtils.getMostSpecificMethod(method, targetClass) : method;
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		if (annotation == null) {
			return null;
		}
		Class<?> userClass = (targetClass != null) ? ClassUtils.getUserClass(targetClass) : method.getDeclaringClass();
		return parse(annotation, specific, userClass);
	}

	private LockOperation parse(DistributedLock annotation, Method method, Class<?> targetClass) {
		String description = describe(method, targetClass);
		checkReturnType(method, description);
		String keySource = annotation.key();
		if (!StringUtils.hasText(keySource)) {
			throw new InvalidLockDeclarationException(description, "key",
					"@DistributedLock needs a key expression (attribute 'key')", null);
		}
		Expression key = this.evaluator.parseAndValidate(keySource, method, targetClass, description);
		Duration ttl = duration(annotation.ttl(), "ttl", this.defaultTtl, LockSettings::ttlRule, description);
		Duration waitTime = duration(annotation.waitTime(), "waitTime", this.defaultWaitTime,
				(value) -> LockSettings.isValidWaitTime(value) ? null : LockSettings.WAIT_TIME_RULE, description);
		String name = StringUtils.hasText(annotation.name()) ? annotation.name()
				: ClassUtils.getShortName(targetClass) + "." + method.getName();
		// the window is a lease of its own: at most a year, as every lease time
		Duration holdAtLeast = duration(annotation.holdAtLeast(), "holdAtLeast", Duration.ZERO,
				(value) -> value.isNegative() ? "must not be negative"
						: (value.compareTo(LockSettings.MAX_TTL) > 0) ? LockSettings.MAX_TTL_RULE : null, description);
		if (holdAtLeast.isZero()) {
			holdAtLeast = null;
		}
		else if (!waitTime.isZero()) {
			// a call that waited would get the lock only once the run it waited for released it, and find its window
			throw new InvalidLockDeclarationException(description, "holdAtLeast", "@DistributedLock attribute "
					+ "'holdAtLeast' (" + holdAtLeast.toMillis() + "ms) needs waitTime = \"0\", but the wait is "
					+ waitTime.toMillis() + "ms" + (StringUtils.hasText(annotation.waitTime()) ? ""
							: " (distlock.default-wait-time, as the declaration sets none)") + ": a call that waited for the lock would find the window of the run it "
					+ "waited for and not run anyway. Set waitTime = \"0\" (with onFailure = SKIP for a scheduled job)",
					null);
		}
		if (holdAtLeast != null && ReactiveReturnTypes.isReactive(method)) {
			throw new InvalidLockDeclarationException(description, "holdAtLeast", "@DistributedLock attribute "
					+ "'holdAtLeast' is not supported on a method that returns a reactive type or is a Kotlin suspend "
					+ "function", null);
		}
		String failureHandler = StringUtils.hasText(annotation.failureHandler()) ? annotation.failureHandler() : null;
		if (failureHandler != null && annotation.onFailure() != OnLockFailure.THROW) {
			// the handler decides alone: an onFailure beside it would be silently ignored
			throw new InvalidLockDeclarationException(description, "failureHandler",
					"@DistributedLock sets both 'failureHandler' (\"" + failureHandler + "\") and 'onFailure' ("
							+ annotation.onFailure() + "): choose one, the handler or onFailure", null);
		}
		DeclaredMode mode = DeclaredMode.of(annotation, holdAtLeast != null, description);
		Duration maxHold = maxHold(annotation, ttl, description);
		LockOperation operation = new LockOperation(method, description, key, keySource, name, ttl, waitTime,
				annotation.fixedLease(), annotation.onFailure(), failureHandler, holdAtLeast, mode.mode(), maxHold,
				mode.permits());
		if (failureHandler != null) {
			// queued first, then checked if the check is due: a concurrent validateFailureHandlers() cannot miss it
			this.uncheckedFailureHandlers.add(operation);
			if (this.failureHandlersCheckable) {
				checkFailureHandlers();
			}
		}
		return operation;
	}

	/**
	 * The declaration's longest hold, else the default one, or null for none: at least the lease time {@code ttl} (the
	 * declaration's, else the default one), at most 365 days.
	 */
	private @Nullable Duration maxHold(DistributedLock annotation, Duration ttl, String description) {
		Duration maxHold = duration(annotation.maxHold(), "maxHold", Duration.ZERO,
				(value) -> LockSettings.maxHoldRule(value, ttl), description);
		if (!maxHold.isZero()) {
			return maxHold;
		}
		Duration fallback = this.defaultMaxHold;
		if (fallback != null && fallback.compareTo(ttl) < 0) {
			throw new InvalidLockDeclarationException(description, "maxHold", "@DistributedLock attribute 'maxHold' "
					+ LockSettings.MAX_HOLD_RULE + " (" + ttl + (StringUtils.hasText(annotation.ttl()) ? ""
							: ", distlock.default-ttl") + "), but was " + fallback + " (distlock.max-hold, as the "
					+ "declaration sets none): set a maxHold of the method's own, or a shorter ttl", null);
		}
		return fallback;
	}

	/**
	 * The duration {@code text} declares, after placeholder resolution, or {@code defaultValue} when it declares none.
	 * @throws InvalidLockDeclarationException if it cannot be resolved or parsed, or breaks a rule ({@code rule}
	 * returns the rule it breaks, or null)
	 */
	private Duration duration(String text, String attribute, Duration defaultValue,
			Function<Duration, @Nullable String> rule, String description) {
		if (!StringUtils.hasText(text)) {
			return defaultValue;
		}
		String resolved;
		try {
			resolved = (this.valueResolver != null) ? this.valueResolver.resolveStringValue(text) : text;
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockDeclarationException(description, attribute, "@DistributedLock attribute '" + attribute
					+ "' (\"" + text + "\") could not be resolved: " + ex.getMessage(), ex);
		}
		if (!StringUtils.hasText(resolved)) {
			return defaultValue;
		}
		Duration duration;
		try {
			duration = DurationText.parse(resolved.trim());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockDeclarationException(description, attribute, "@DistributedLock attribute '" + attribute
					+ "' is " + quote(text, resolved) + ", which is not a duration (examples: \"30s\", \"500ms\", \"PT2S\")",
					ex);
		}
		String broken = rule.apply(duration);
		if (broken != null) {
			throw new InvalidLockDeclarationException(description, attribute, "@DistributedLock attribute '" + attribute
					+ "' " + broken + ", but was " + quote(text, resolved), null);
		}
		return duration;
	}

	/**
	 * The value as written, quoted, and the value it resolved to when a placeholder changed it: {@code "0s"}, or
	 * {@code "${inventory.lock.ttl}" (resolved to "0s")}. A complete phrase, so callers never add quotes of their own.
	 */
	private static String quote(String text, String resolved) {
		return text.equals(resolved) ? "\"" + text + "\"" : "\"" + text + "\" (resolved to \"" + resolved + "\")";
	}

	private static void checkReturnType(Method method, String description) {
		Class<?> returnType = method.getReturnType();
		if (FutureLockInvocation.returnsFuture(method)) {
			return;
		}
		if (CompletionStage.class.isAssignableFrom(returnType) || Future.class.isAssignableFrom(returnType)) {
			// a plain Future cannot tell when it completes; any other subtype is not the CompletableFuture returned
			throw new InvalidLockDeclarationException(description, null, "@DistributedLock is not supported on a "
					+ "method that returns " + returnType.getSimpleName() + ": the lock is held until the returned future "
					+ "completes, and the interceptor returns a CompletableFuture for it. Declare the return type "
					+ "CompletableFuture or CompletionStage.", null);
		}
		if (ReactiveReturnTypes.isReactive(method)) {
			// locked per subscription (ReactiveLockInvocation) where it can be
			String problem = ReactiveReturnTypes.problem(method);
			if (problem != null) {
				throw new InvalidLockDeclarationException(description, null, "@DistributedLock is not supported on a "
						+ "method that " + problem, null);
			}
		}
	}

	static String describe(Method method, Class<?> targetClass) {
		return targetClass.getName() + "." + method.getName() + "("
				+ String.join(", ", java.util.Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList()) + ")";
	}

}
