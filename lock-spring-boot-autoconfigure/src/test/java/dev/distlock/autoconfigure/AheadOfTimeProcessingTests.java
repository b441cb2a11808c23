package dev.distlock.autoconfigure;

import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import dev.distlock.actuate.ForceReleaseLocksEndpoint.ForceReleaseDescriptor;
import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.actuate.LocksEndpoint.LeaseDescriptor;
import dev.distlock.actuate.LocksEndpoint.LocksDescriptor;
import dev.distlock.annotation.DistributedLock;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisCluster;

import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles.Kind;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Spring's ahead-of-time processing, as {@code spring-boot:process-aot} runs it, over the starter's auto-configurations
 * and two locked beans: one proxied with CGLIB, one with a JDK proxy. It must process without error, and the hints it
 * produces must hold what the interceptor needs in a native image (the starter's own hints) and what Spring and Spring
 * Boot register for the starter by themselves (the endpoint's operation and JSON records, the configuration
 * properties, the {@code spring.factories} entries). Nothing here connects to Redis: AOT processing creates no
 * ordinary bean.
 */
class AheadOfTimeProcessingTests {

	private static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					EndpointAutoConfiguration.class, LocksEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=1", "management.endpoints.web.exposure.include=locks",
					"distlock.actuator.force-release.enabled=true")
			.withUserConfiguration(LockedBeans.class);
	}

	@Test
	void processesTheStarterAheadOfTime() {
		Processed processed = process(runner());

		assertThat(processed.initializer().simpleName()).endsWith("__ApplicationContextInitializer");
	}

	/**
	 * The methods of a class proxied with CGLIB Spring registers itself, with the proxy class; those of a bean behind
	 * a JDK proxy (and of any bean in AspectJ mode) only the starter does.
	 */
	@Test
	void registersTheLockedMethodsForInvocation() throws Exception {
		RuntimeHints hints = process(runner()).hints();

		ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();
		assertThat(hints).matches(reflection.onMethodInvocation(Stock.class.getMethod("sell", String.class)))
			.matches(reflection.onMethodInvocation(StockOrders.class.getMethod("place", String.class)))
			.matches(reflection.onMethodInvocation(Orders.class.getMethod("place", String.class)));
	}

	@Test
	void registersTheJdkProxyWithTheInterfacesOfTheProxyMadeAtRunTime() {
		RuntimeHints hints = process(runner()).hints();
		AtomicReference<Class<?>[]> runtimeInterfaces = new AtomicReference<>();
		runner().run((context) -> runtimeInterfaces.set(context.getBean("orders").getClass().getInterfaces()));

		assertThat(runtimeInterfaces.get()).as("a JDK proxy of the bean's interfaces, in their order")
			.startsWith(AutoCloseable.class, Orders.class);
		assertThat(hints).matches(RuntimeHintsPredicates.proxies().forInterfaces(runtimeInterfaces.get()));
	}

	@Test
	void generatesTheCglibProxyOfALockedClass() {
		InMemoryGeneratedFiles files = process(runner()).files();

		assertThat(files.getGeneratedFiles(Kind.CLASS).keySet())
			.anyMatch((name) -> name.startsWith(Stock.class.getName().replace('.', '/') + "$$SpringCGLIB$$"));
	}

	@Test
	void includesTheStartersOwnRuntimeHints() throws Exception {
		RuntimeHints hints = process(runner()).hints();

		assertThat(hints).matches(RuntimeHintsPredicates.proxies().forInterfaces(DistributedLock.class))
			.matches(RuntimeHintsPredicates.reflection()
				.onMethodInvocation(JedisCluster.class.getMethod("getConnectionFromSlot", int.class)));
	}

	/** Registered by Spring Boot, not by the starter: checked here so that a change on either side is seen. */
	@Test
	void springBootRegistersTheEndpointPropertiesAndFactoriesOfTheStarter() throws Exception {
		RuntimeHints hints = process(runner()).hints();

		ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();
		assertThat(hints).matches(reflection.onMethodInvocation(LocksEndpoint.class.getMethod("locks",
				SecurityContext.class)));
		for (Class<?> record : new Class<?>[] { LocksDescriptor.class, LeaseDescriptor.class }) {
			for (var component : record.getRecordComponents()) {
				assertThat(hints).as(record.getSimpleName() + "." + component.getName())
					.matches(reflection.onMethodInvocation(component.getAccessor()));
			}
		}
		Method ttlSetter = LockProperties.class.getMethod("setDefaultTtl", java.time.Duration.class);
		assertThat(hints).matches(reflection.onMethodInvocation(ttlSetter));
		for (Class<?> factory : new Class<?>[] { InvalidLockDeclarationFailureAnalyzer.class,
				LockPreflightFailureAnalyzer.class, SpringBootVersionGuard.class }) {
			assertThat(hints).as(factory.getSimpleName())
				.matches(reflection.onType(factory).withMemberCategory(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS));
		}
	}

	/**
	 * The bean's declared type is {@code LocksEndpoint}; the subclass with the delete operation is registered by the
	 * starter ({@code LocksEndpointRuntimeHints}), as Spring Boot would register it were it the declared type.
	 */
	@Test
	void registersTheForceReleaseOperationAndItsAnswer() throws Exception {
		RuntimeHints hints = process(runner()).hints();

		ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();
		assertThat(hints).matches(reflection.onMethodInvocation(
				ForceReleaseLocksEndpoint.class.getMethod("forceRelease", String[].class, SecurityContext.class)));
		for (var component : ForceReleaseDescriptor.class.getRecordComponents()) {
			assertThat(hints).as(component.getName()).matches(reflection.onMethodInvocation(component.getAccessor()));
		}
	}

	@Test
	void aBadDeclarationFailsTheProcessingAsItFailsTheStart() {
		assertThatExceptionOfType(Exception.class)
			.isThrownBy(() -> process(runner().withUserConfiguration(BadDeclaration.class)))
			.satisfies((ex) -> assertThat(invalidDeclaration(ex)).hasMessageContaining("Unparsable.sell")
				.hasMessageContaining("ttl"));
	}

	/** As in AspectJ mode, where the woven aspect locks: the methods are registered, and no proxy. */
	@Test
	void withoutTheProxyingPostProcessorTheMethodsAreStillRegisteredButNoProxy() throws Exception {
		RuntimeHints hints = process(runner().withPropertyValues("distlock.enabled=false")).hints();

		assertThat(hints).matches(RuntimeHintsPredicates.reflection().onMethodInvocation(StockOrders.class.getMethod("place", String.class)))
			.doesNotMatch(RuntimeHintsPredicates.proxies().forInterfaces(Orders.class,
					org.springframework.aop.SpringProxy.class, org.springframework.aop.framework.Advised.class,
					org.springframework.core.DecoratingProxy.class));
	}

	private static InvalidLockDeclarationException invalidDeclaration(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidLockDeclarationException invalid) {
				return invalid;
			}
		}
		throw new AssertionError("No InvalidLockDeclarationException in the causes of " + failure, failure);
	}

	private static Processed process(ApplicationContextRunner runner) {
		AtomicReference<Processed> processed = new AtomicReference<>();
		runner.prepare((context) -> {
			InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
			DefaultGenerationContext generation = new DefaultGenerationContext(
					new org.springframework.aot.generate.ClassNameGenerator(ClassName.get(AheadOfTimeProcessingTests.class)), files);
			ClassName initializer = new ApplicationContextAotGenerator()
				.processAheadOfTime(context.getSourceApplicationContext(GenericApplicationContext.class), generation);
			generation.writeGeneratedContent();
			processed.set(new Processed(initializer, generation.getRuntimeHints(), files));
		});
		return processed.get();
	}

	record Processed(ClassName initializer, RuntimeHints hints, InMemoryGeneratedFiles files) {
	}

	/** A locked class without interfaces: proxied with CGLIB. */
	public static class Stock {

		@DistributedLock(key = "#sku", ttl = "10s", waitTime = "1s")
		public void sell(String sku) {
		}

		public int count() {
			return 0;
		}

	}

	/** A locked interface method. */
	public interface Orders {

		@DistributedLock(key = "'orders:' + #customer")
		void place(String customer);

	}

	/** Implements a callback interface too, which the proxy leaves out. */
	public static class StockOrders implements AutoCloseable, Orders {

		@Override
		public void place(String customer) {
		}

		@Override
		public void close() {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LockedBeans {

		@Bean
		Stock stock() {
			return new Stock();
		}

		@Bean
		StockOrders orders() {
			return new StockOrders();
		}

	}

	public static class Unparsable {

		@DistributedLock(key = "#sku", ttl = "ten seconds")
		public void sell(String sku) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BadDeclaration {

		@Bean
		Unparsable unparsable() {
			return new Unparsable();
		}

	}

}
