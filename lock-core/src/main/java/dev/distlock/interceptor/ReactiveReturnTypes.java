package dev.distlock.interceptor;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;

import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;
import org.springframework.util.ConcurrentReferenceHashMap;

/**
 * Which annotated methods take the reactive path ({@link ReactiveLockInvocation}), and why others cannot. Free of
 * Reactor's types, so that it can be asked without Reactor on the classpath.
 */
final class ReactiveReturnTypes {

	/** The type whose presence means Reactor; registered for native images ({@link DistributedLockRuntimeHints}). */
	static final String REACTOR_TYPE = "reactor.core.publisher.Mono";

	/** The type whose presence means kotlinx-coroutines-reactor; registered like {@link #REACTOR_TYPE}. */
	static final String COROUTINES_REACTOR_TYPE = "kotlinx.coroutines.reactor.MonoKt";

	static final boolean REACTOR_PRESENT = ClassUtils.isPresent(REACTOR_TYPE, ReactiveReturnTypes.class.getClassLoader());

	/** Spring AOP proxies {@code suspend} functions only with kotlinx-coroutines-reactor (as its AopUtils checks). */
	static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils.isPresent(COROUTINES_REACTOR_TYPE,
			ReactiveReturnTypes.class.getClassLoader());

	private static final String CONTINUATION = "kotlin.coroutines.Continuation";

	/** Asked on every locked call: the adapter registry's lookup walks its adapters, so the answer is kept. */
	private static final Map<Method, Boolean> REACTIVE = new ConcurrentReferenceHashMap<>(256);

	private ReactiveReturnTypes() {
	}

	/**
	 * Whether {@code method} returns a reactive type or is a Kotlin {@code suspend} function (supported or not).
	 */
	static boolean isReactive(Method method) {
		return REACTIVE.computeIfAbsent(method, ReactiveReturnTypes::computeIsReactive);
	}

	private static boolean computeIsReactive(Method method) {
		Class<?> type = method.getReturnType();
		if (CompletionStage.class.isAssignableFrom(type) || Future.class.isAssignableFrom(type)) {
			return false;
		}
		return isSuspending(method) || ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
	}

	/** Shaped like a compiled {@code suspend} function: its last parameter is a {@code Continuation}. */
	static boolean isSuspending(Method method) {
		int count = method.getParameterCount();
		return count > 0 && method.getParameterTypes()[count - 1].getName().equals(CONTINUATION);
	}

	/**
	 * Why the reactive path cannot lock {@code method} (which {@link #isReactive(Method) is reactive}), or null when it
	 * can: a lazy ("deferred") reactive type, or a {@code suspend} function not returning a {@code Flow}, with Reactor
	 * (and kotlinx-coroutines-reactor for a {@code suspend} function) on the classpath.
	 */
	static @Nullable String problem(Method method) {
		if (isSuspending(method)) {
			if (!KotlinDetector.isSuspendingFunction(method)) {
				return "takes a Continuation but is not a Kotlin suspend function declared in a Kotlin class, which "
						+ "Spring's proxies cannot resume";
			}
			if (!REACTOR_PRESENT || !COROUTINES_REACTOR_PRESENT) {
				return "is a Kotlin suspend function, which is locked only with kotlinx-coroutines-reactor (and Reactor) "
						+ "on the classpath";
			}
			if (method.getReturnType().getName().equals("kotlinx.coroutines.flow.Flow")) {
				return "is a Kotlin suspend function returning a Flow, which is not supported: return the Flow from a "
						+ "function that is not suspend, or a single value";
			}
			return null;
		}
		Class<?> type = method.getReturnType();
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance().getAdapter(type);
		if (adapter == null) {
			return null;
		}
		if (!REACTOR_PRESENT) {
			return "returns the reactive type " + type.getSimpleName() + ", which is locked only with Reactor "
					+ "(io.projectreactor:reactor-core) on the classpath";
		}
		if (!adapter.getDescriptor().isDeferred()) {
			return "returns " + type.getSimpleName() + ", a reactive type whose work starts before it is subscribed, "
					+ "so the lock could not be held while it runs";
		}
		return null;
	}

}
