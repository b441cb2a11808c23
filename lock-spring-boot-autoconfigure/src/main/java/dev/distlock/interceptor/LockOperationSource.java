package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

import dev.distlock.annotation.DistributedLock;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

/**
 * Turns {@link DistributedLock @DistributedLock} declarations into {@link LockOperation}s: once per method and target
 * class, cached, with every check done at that moment so that a mistake fails the application's start rather than a
 * call. The annotation is looked up as a merged annotation (meta-annotations and {@code @AliasFor} work) on the most
 * specific method first, then on the method as invoked (an interface method).
 *
 * @since 0.1.0
 */
public class LockOperationSource {

	private static final Object NO_OPERATION = new Object();

	private static final String CONTINUATION = "kotlin.coroutines.Continuation";

	private final Map<MethodClassKey, Object> cache = new ConcurrentHashMap<>(256);

	private final LockKeyEvaluator evaluator;

	private final @Nullable StringValueResolver valueResolver;

	private final Duration defaultTtl;

	private final Duration defaultWaitTime;

	/**
	 * A source that parses each method's annotation once, with the given defaults.
	 * @param beanFactory resolves {@code @bean} references in keys (checked at startup), or null
	 * @param valueResolver resolves {@code ${...}} placeholders in durations, or null
	 * @param defaultTtl the lease time of declarations that give none
	 * @param defaultWaitTime the wait of declarations that give none
	 */
	public LockOperationSource(@Nullable BeanFactory beanFactory, @Nullable StringValueResolver valueResolver,
			Duration defaultTtl, Duration defaultWaitTime) {
		this.evaluator = new LockKeyEvaluator(beanFactory);
		this.valueResolver = valueResolver;
		this.defaultTtl = defaultTtl;
		this.defaultWaitTime = defaultWaitTime;
	}

	LockKeyEvaluator evaluator() {
		return this.evaluator;
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
		List<Method> annotated = new ArrayList<>();
		ReflectionUtils.doWithMethods(userClass, annotated::add,
				method -> AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class));
		for (Class<?> ifc : ClassUtils.getAllInterfacesForClassAsSet(userClass)) {
			for (Method method : ifc.getMethods()) {
				if (AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class)) {
					annotated.add(method);
				}
			}
		}
		for (Method method : annotated) {
			int modifiers = method.getModifiers();
			String problem = Modifier.isPrivate(modifiers) ? "private" : Modifier.isStatic(modifiers) ? "static"
					: (Modifier.isFinal(modifiers) && !method.getDeclaringClass().isInterface()) ? "final" : null;
			if (problem != null) {
				throw new InvalidLockDeclarationException(describe(method, userClass) + ": @DistributedLock on a "
						+ problem + " method has no effect, because a Spring proxy cannot intercept it");
			}
			getOperation(method, userClass);
		}
		return !annotated.isEmpty();
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
			throw new InvalidLockDeclarationException(description + ": @DistributedLock needs a key expression (attribute 'key')");
		}
		Expression key = this.evaluator.parseAndValidate(keySource, method, targetClass, description);
		Duration ttl = duration(annotation.ttl(), "ttl", this.defaultTtl, description);
		if (ttl.isNegative() || ttl.isZero() || ttl.toMillis() < 1) {
			throw new InvalidLockDeclarationException(description + ": @DistributedLock attribute 'ttl' must be at least 1ms, but was "
					+ show(annotation.ttl(), ttl));
		}
		Duration waitTime = duration(annotation.waitTime(), "waitTime", this.defaultWaitTime, description);
		if (waitTime.isNegative()) {
			throw new InvalidLockDeclarationException(description + ": @DistributedLock attribute 'waitTime' must not be negative, but was "
					+ show(annotation.waitTime(), waitTime));
		}
		String name = StringUtils.hasText(annotation.name()) ? annotation.name()
				: ClassUtils.getShortName(targetClass) + "." + method.getName();
		String failureHandler = StringUtils.hasText(annotation.failureHandler()) ? annotation.failureHandler() : null;
		return new LockOperation(method, description, key, keySource, name, ttl, waitTime, annotation.fixedLease(),
				annotation.onFailure(), failureHandler);
	}

	private Duration duration(String text, String attribute, Duration defaultValue, String description) {
		if (!StringUtils.hasText(text)) {
			return defaultValue;
		}
		String resolved;
		try {
			resolved = (this.valueResolver != null) ? this.valueResolver.resolveStringValue(text) : text;
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockDeclarationException(description + ": @DistributedLock attribute '" + attribute + "' (\""
					+ text + "\") could not be resolved: " + ex.getMessage(), ex);
		}
		if (!StringUtils.hasText(resolved)) {
			return defaultValue;
		}
		try {
			return DurationStyle.detectAndParse(resolved.trim());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidLockDeclarationException(description + ": @DistributedLock attribute '" + attribute + "' is \""
					+ show(text, resolved) + "\", which is not a duration (examples: \"30s\", \"500ms\", \"PT2S\")", ex);
		}
	}

	private static String show(String text, Object resolved) {
		return text.equals(String.valueOf(resolved)) ? text : text + "\" resolved to \"" + resolved;
	}

	private static void checkReturnType(Method method, String description) {
		Class<?> returnType = method.getReturnType();
		String kind = null;
		if (CompletionStage.class.isAssignableFrom(returnType) || Future.class.isAssignableFrom(returnType)) {
			kind = "returns " + returnType.getSimpleName();
		}
		else if (ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
			kind = "returns the reactive type " + returnType.getSimpleName();
		}
		else if (method.getParameterCount() > 0
				&& method.getParameterTypes()[method.getParameterCount() - 1].getName().equals(CONTINUATION)) {
			kind = "is a Kotlin suspend function";
		}
		if (kind != null) {
			throw new InvalidLockDeclarationException(description + ": @DistributedLock is not supported on a method that "
					+ kind + ": the lock would be released when the method returns, before the asynchronous work it "
					+ "started has finished. Lock inside the asynchronous work instead (LockService.execute).");
		}
	}

	static String describe(Method method, Class<?> targetClass) {
		return targetClass.getName() + "." + method.getName() + "("
				+ String.join(", ", java.util.Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList()) + ")";
	}

}
