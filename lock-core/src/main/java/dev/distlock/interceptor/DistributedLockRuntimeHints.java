package dev.distlock.interceptor;

import dev.distlock.annotation.DistributedLock;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;

/**
 * What the {@link DistributedLock @DistributedLock} machinery reads reflectively at run time, whatever bean it
 * advises, for an application built ahead of time into a GraalVM native image (on the JVM, Spring AOT needs none of
 * it). The annotated methods of each bean are registered by {@link DistributedLockBeanRegistrationAotProcessor}.
 * <ul>
 * <li>The annotation is read as a merged, synthesized annotation ({@code AnnotatedElementUtils.findMergedAnnotation}):
 * as its {@code key} and {@code value} are aliases, Spring always synthesizes it, a JDK proxy that implements
 * {@code DistributedLock} alone. A native image has that proxy class only for annotation types it saw as
 * annotations; this hint makes it independent of that, for an application whose methods carry
 * {@code @DistributedLock} only as a meta-annotation of its own annotation.</li>
 * <li>Key expressions read {@code #root.method}, {@code #root.methodName}, {@code #root.args},
 * {@code #root.target} and {@code #root.targetClass} from {@link LockKeyEvaluator.LockExpressionRoot} through SpEL's
 * reflective property access.</li>
 * <li>Reactor and kotlinx-coroutines-reactor are looked up by name ({@code ClassUtils.isPresent}) when the
 * interceptor's classes initialize, at run time: a native image finds by name only the types registered for it, and
 * without these the interceptor would take reactive methods for plain ones.</li>
 * </ul>
 * The actuator endpoint's operations and their JSON records, the configuration properties, the auto-configurations
 * and the {@code spring.factories} entries are registered by Spring and Spring Boot themselves. Registered in
 * {@code META-INF/spring/aot.factories} rather than on the auto-configuration: the interceptor also works in a context
 * that defines it without the auto-configuration.
 */
final class DistributedLockRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.proxies().registerJdkProxy(DistributedLock.class);
		hints.reflection().registerType(LockKeyEvaluator.LockExpressionRoot.class, MemberCategory.INVOKE_PUBLIC_METHODS);
		hints.reflection().registerType(TypeReference.of(ReactiveReturnTypes.REACTOR_TYPE));
		hints.reflection().registerType(TypeReference.of(ReactiveReturnTypes.COROUTINES_REACTOR_TYPE));
	}

}
