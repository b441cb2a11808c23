package dev.distlock.test.redis;

import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Injects {@link RedisServer} parameters into test constructors, test methods and lifecycle
 * methods ({@code @BeforeAll} included), so tests get a real, private Redis without boilerplate.
 *
 * <p>Each test class gets one server (two if it also asks for an {@link EmbeddedRedis} one),
 * shared by all its methods and closed when the class finishes, whether its tests passed or not.
 * Data persists between the methods of a class, so tests should {@code FLUSHALL} as needed. A
 * server a test left stopped or paused is restarted or resumed before it is injected again.
 *
 * <pre>{@code
 * @ExtendWith(RedisServerExtension.class)
 * class LockIT {
 *   @Test
 *   void locks(RedisServer redis) {
 *     redis.execute("SET", "k", "v");
 *   }
 * }
 * }</pre>
 */
public final class RedisServerExtension implements ParameterResolver {

	private static final Namespace NAMESPACE = Namespace.create(RedisServerExtension.class);

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		return parameterContext.getParameter().getType() == RedisServer.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		boolean embedded = wantsEmbedded(parameterContext, extensionContext);
		RedisServer server = classContext(extensionContext).getStore(NAMESPACE).computeIfAbsent(
				embedded ? "embedded" : "detected",
				key -> embedded ? RedisServer.builder().embedded().start() : RedisServer.start(),
				RedisServer.class);
		server.ensureReady();
		return server;
	}

	/** The closest class-level context: the store there outlives single test methods. */
	static ExtensionContext classContext(ExtensionContext context) {
		ExtensionContext current = context;
		while (current.getTestMethod().isPresent() && current.getParent().isPresent()) {
			current = current.getParent().get();
		}
		return current;
	}

	static boolean wantsEmbedded(ParameterContext parameterContext, ExtensionContext extensionContext) {
		if (parameterContext.isAnnotated(EmbeddedRedis.class)) {
			return true;
		}
		Executable executable = parameterContext.getDeclaringExecutable();
		if (executable instanceof Method && executable.isAnnotationPresent(EmbeddedRedis.class)) {
			return true;
		}
		Optional<Class<?>> type = extensionContext.getTestClass();
		for (Class<?> c = type.orElse(executable.getDeclaringClass()); c != null; c = c.getEnclosingClass()) {
			if (c.isAnnotationPresent(EmbeddedRedis.class)) {
				return true;
			}
		}
		return false;
	}
}
