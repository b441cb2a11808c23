package dev.distlock.aspectj;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What AspectJ mode reads reflectively at run time, for an application built ahead of time into a GraalVM native
 * image (compile-time weaving only: a native image has no load-time weaver). {@code Aspects.aspectOf} finds the
 * aspect's {@code aspectOf()} by reflection and calls it; the weaving check only lists the declared methods of the
 * bean classes, which Spring registers. The locked methods are registered by the starter, as in proxy mode.
 */
final class AspectJLockRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.reflection().registerType(DistributedLockAspect.class,
				(type) -> type.withMethod("aspectOf", List.of(), ExecutableMode.INVOKE));
	}

}
