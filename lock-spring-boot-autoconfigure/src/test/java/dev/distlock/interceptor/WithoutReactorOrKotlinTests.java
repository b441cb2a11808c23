package dev.distlock.interceptor;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.function.Supplier;

import dev.distlock.autoconfigure.InMemoryLockService;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.ApplicationContext;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.expression.Expression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The main code is usable without Reactor, Reactive Streams and Kotlin on the classpath (they are optional): the
 * probe parses a declaration and locks a call in a class loader that holds only the jars it needs.
 */
class WithoutReactorOrKotlinTests {

	@Test
	void theInterceptorParsesAndLocksWithoutThem() throws Exception {
		Set<URL> urls = new LinkedHashSet<>();
		for (Class<?> type : new Class<?>[] { DistributedLockInterceptor.class, WithoutReactorProbe.class,
				InMemoryLockService.class, ProxyFactory.class, BeanFactory.class, ApplicationContext.class,
				ReactiveAdapterRegistry.class, Expression.class, DurationStyle.class, ObservationRegistry.class,
				KeyValues.class, org.apache.commons.logging.LogFactory.class }) {
			urls.add(type.getProtectionDomain().getCodeSource().getLocation());
		}
		assertThat(urls).noneMatch((url) -> url.toString().contains("reactor") || url.toString().contains("kotlin")
				|| url.toString().contains("reactive-streams"));
		try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
			for (String absent : new String[] { "reactor.core.publisher.Mono", "org.reactivestreams.Publisher",
					"kotlin.coroutines.Continuation" }) {
				assertThatExceptionOfType(ClassNotFoundException.class).isThrownBy(() -> loader.loadClass(absent));
			}
			assertThat(loader.loadClass(DistributedLockInterceptor.class.getName()).getClassLoader()).isSameAs(loader);
			Class<?> probe = loader.loadClass(WithoutReactorProbe.class.getName());
			@SuppressWarnings("unchecked")
			Supplier<String> supplier = (Supplier<String>) probe.getDeclaredConstructor().newInstance();
			assertThat(supplier.get()).isEqualTo("locked=true");
		}
	}

}
