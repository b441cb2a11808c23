package dev.distlock.autoconfigure;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;

/**
 * Registers the operations of {@link ForceReleaseLocksEndpoint} for a GraalVM native image, as Spring Boot registers
 * those of every endpoint bean: its delete operation for invocation and the record it answers with for JSON binding.
 * Spring Boot does this from a bean's declared type, which for the {@code locks} endpoint is {@code LocksEndpoint}:
 * the factory method returns the subclass only when {@code distlock.actuator.force-release.enabled=true}, a property
 * read at run time, so without this hint a native image would neither find the operation nor write its answer.
 */
final class LocksEndpointRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(hints, ForceReleaseLocksEndpoint.class);
	}

}
