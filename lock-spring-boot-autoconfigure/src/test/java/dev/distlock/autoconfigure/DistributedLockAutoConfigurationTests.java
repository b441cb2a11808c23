package dev.distlock.autoconfigure;

import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.jayway.jsonpath.JsonPath;
import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.EnableDistributedLocks;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.interceptor.LostLeasePolicy;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** The auto-configuration's conditions, back-off and properties, with a real Redis behind the connection factory. */
@ExtendWith({ RedisServerExtension.class, OutputCaptureExtension.class })
class DistributedLockAutoConfigurationTests {

	private static RedisServer redis;

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void registersALockServiceOnTheApplicationsRedisAndTheInterceptor() {
		runner().run(context -> {
			assertThat(context).hasSingleBean(RedisLockService.class).hasSingleBean(DistributedLockBeanPostProcessor.class);
			LockService locks = context.getBean(LockService.class);
			try (Lease lease = locks.acquire("auto-configured", Duration.ofSeconds(10), Duration.ZERO)) {
				assertThat(redis.execute("HGET", "lock:{auto-configured}", lease.owner())).isEqualTo("1");
			}
		});
	}

	@Test
	void theServiceStopsBeforeTheConnectionFactoryAndItsCloseLogsNoClientWarning(CapturedOutput output) {
		runner().run(context -> {
			RedisLockService locks = context.getBean(RedisLockService.class);
			// a wait opens a release channel on the pub/sub connection, which the service closes when it stops
			locks.acquire("stopping", Duration.ofSeconds(10), Duration.ZERO);
			assertThat(CompletableFuture.supplyAsync(
					() -> locks.tryAcquire("stopping", Duration.ofSeconds(10), Duration.ofMillis(200))).get()).isEmpty();
			LettuceConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
			assertThat(locks.getPhase()).isGreaterThan(factory.getPhase());
			context.close();
			assertThat(locks.isRunning()).isFalse();
		});
		assertThat(output).doesNotContain("Connection is already closed").doesNotContain("WARN io.lettuce");
	}

	/**
	 * Issue 26: with a 2 s command timeout and the default renewal ratio, a renewed lease needs more than
	 * 2 s / (1 - 1/3 x 1.25) = 3.43 s to survive one renewal left unanswered; the 3 s lease of {@link ShortLeases} is
	 * named at startup, its 10 s and its fixed 1 s leases are not (a fixed lease is never renewed).
	 */
	@Test
	void renewedLeaseTimesTooShortForTheCommandTimeoutAreNamedAtStartup(CapturedOutput output) {
		runner().withPropertyValues("spring.data.redis.timeout=2s").withBean(ShortLeases.class).run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(RedisLockService.class).shortestRenewableTtl()).isEqualTo(Duration.ofMillis(3429));
		});
		assertThat(output).containsOnlyOnce("Renewed lease times shorter than PT3.429S")
			.contains("PT3S on dev.distlock.autoconfigure.DistributedLockAutoConfigurationTests$ShortLeases.tight()")
			.doesNotContain("ShortLeases.roomy").doesNotContain("ShortLeases.fixed");
	}

	@Test
	void leaseTimesThatOutlastTheCommandTimeoutGetNoWarning(CapturedOutput output) {
		runner().withPropertyValues("spring.data.redis.timeout=500ms").withBean(ShortLeases.class).run(context -> {
			assertThat(context).hasNotFailed();
		});
		assertThat(output).doesNotContain("Renewed lease times shorter than");
	}

	/**
	 * Without Boot, {@code @EnableDistributedLocks} sets up the proxies itself (lock-core's proxy configuration, last
	 * and only when no post-processor is defined); with Boot, the auto-configuration's, which applies the
	 * {@code distlock.*} properties, is the one.
	 */
	@Test
	void theExplicitProxyModeIsWhatTheAutoConfigurationDoesAnyway() {
		runner().withUserConfiguration(ProxyMode.class).run(context -> {
			assertThat(context).hasNotFailed().hasSingleBean(DistributedLockBeanPostProcessor.class);
			assertThat(context.getBeanFactory()
				.getBeanDefinition(context.getBeanNamesForType(DistributedLockBeanPostProcessor.class)[0])
				.getBeanClassName()).isEqualTo(DistributedLockAutoConfiguration.class.getName());
		});
	}

	@Test
	void theExplicitProxyModeIsOffWhenTheLocksAreTurnedOff() {
		runner().withUserConfiguration(ProxyMode.class).withPropertyValues("distlock.enabled=false").run(context -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(DistributedLockBeanPostProcessor.class);
		});
	}

	@Test
	void theAspectJModeWithoutTheAspectJModuleFailsTheStartNamingTheModule() {
		runner().withUserConfiguration(AspectJMode.class).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("@EnableDistributedLocks(mode = AdviceMode.ASPECTJ)")
				.hasMessageContaining("dev.distlock:lock-aspectj");
		});
	}

	@Test
	void backsOffWhenTheApplicationDefinesItsOwnLockService() {
		runner().withUserConfiguration(OwnLockService.class).run(context -> {
			assertThat(context).hasSingleBean(LockService.class).doesNotHaveBean(RedisLockService.class);
			assertThat(context.getBean(LockService.class)).isSameAs(OwnLockService.INSTANCE);
			assertThat(context).hasSingleBean(DistributedLockBeanPostProcessor.class);
		});
	}

	@Test
	void isOffWithLockEnabledFalse() {
		runner().withPropertyValues("distlock.enabled=false").run(context -> {
			assertThat(context).doesNotHaveBean(LockService.class).doesNotHaveBean(DistributedLockBeanPostProcessor.class);
			assertThat(context).hasSingleBean(RedisConnectionFactory.class);
		});
	}

	@Test
	void withoutSpringDataRedisTheApplicationsOwnLockServiceGetsTheAnnotation() throws Exception {
		withoutSpringDataRedis().withUserConfiguration(OwnInMemoryLockService.class).withBean(Ledger.class).run(context -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(LockService.class)
				.hasSingleBean(DistributedLockBeanPostProcessor.class)
				.hasBean("distributedLockBeanPostProcessor")
				.doesNotHaveBean("lockService");
			InMemoryLockService locks = context.getBean(InMemoryLockService.class);
			Ledger ledger = context.getBean(Ledger.class);

			Lease lease = ledger.post("acct-1").orElseThrow();
			assertThat(lease).isInstanceOf(InMemoryLockService.InMemoryLease.class);
			assertThat(lease.key()).isEqualTo("ledger:acct-1");
			assertThat(lease.name()).isEqualTo("ledger");
			assertThat(lease.isHeld()).as("released when the call returned").isFalse();
			assertThat(locks.requests()).singleElement()
				.satisfies(request -> assertThat(request.waitTime()).isEqualTo(Duration.ofMillis(200)));

			// a key held by another thread: the call waits its 200ms and fails, as it would on Redis
			ExecutorService holder = Executors.newSingleThreadExecutor();
			try {
				Lease held = holder.submit(() -> locks.acquire("ledger:acct-2", Duration.ofSeconds(10), Duration.ZERO))
					.get(5, TimeUnit.SECONDS);
				assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> ledger.post("acct-2"))
					.withMessageContaining("ledger:acct-2");
				holder.submit(held::release).get(5, TimeUnit.SECONDS);
			}
			finally {
				holder.shutdownNow();
			}
			assertThat(ledger.post("acct-2")).isPresent();
		});
	}

	@Test
	void withNeitherRedisNorALockServiceThereIsNoInterceptorAndNoFailure() {
		withoutSpringDataRedis().withBean(Ledger.class).run(context -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockService.class)
				.doesNotHaveBean(DistributedLockBeanPostProcessor.class);
			assertThat(context.getBean(Ledger.class).post("acct-1")).as("runs unlocked, as with the starter off").isEmpty();
		});
		// Spring Data Redis on the classpath, but no connection factory: no engine either
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RedisLockServiceAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			.withBean(Ledger.class)
			.run(context -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockService.class)
				.doesNotHaveBean(DistributedLockBeanPostProcessor.class));
	}

	@Test
	void isAbsentWithoutSpringDataRedis() {
		withoutSpringDataRedis().run(context -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(LockService.class)
			.doesNotHaveBean(DistributedLockBeanPostProcessor.class)
			.doesNotHaveBean(LockProperties.class));
	}

	private static ApplicationContextRunner withoutSpringDataRedis() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"));
	}

	@Test
	void theInterceptorIsAbsentWithoutSpringAop() {
		runner().withClassLoader(new FilteredClassLoader("org.springframework.aop.framework"))
			.run(context -> assertThat(context).hasSingleBean(LockService.class)
				.doesNotHaveBean(DistributedLockBeanPostProcessor.class));
	}

	@Test
	void propertiesBind() {
		runner().withPropertyValues("distlock.key-prefix=orders", "distlock.default-ttl=45s",
				"distlock.default-wait-time=750ms", "distlock.renewal-ratio=0.5", "distlock.advice-order=7",
				"distlock.on-lost-lease=warn", "distlock.idle-unsubscribe=PT3S", "distlock.local-hand-overs=2")
			.run(context -> {
				LockProperties properties = context.getBean(LockProperties.class);
				assertThat(properties.getKeyPrefix()).isEqualTo("orders");
				assertThat(properties.getDefaultTtl()).isEqualTo(Duration.ofSeconds(45));
				assertThat(properties.getDefaultWaitTime()).isEqualTo(Duration.ofMillis(750));
				assertThat(properties.getRenewalRatio()).isEqualTo(0.5);
				assertThat(properties.getAdviceOrder()).isEqualTo(7);
				assertThat(properties.getOnLostLease()).isEqualTo(LostLeasePolicy.WARN);
				assertThat(properties.getIdleUnsubscribe()).isEqualTo(Duration.ofSeconds(3));
				assertThat(properties.getLocalHandOvers()).isEqualTo(2);

				RedisLockService service = context.getBean(RedisLockService.class);
				assertThat(service.redisKey("k")).isEqualTo("orders:{k}");
				try (Lease lease = service.acquire("k", Duration.ofSeconds(5), Duration.ZERO)) {
					assertThat(redis.execute("EXISTS", "orders:{k}")).isEqualTo(1L);
				}
			});
	}

	@Test
	void invalidPropertiesFailTheStartNamingTheProperty() {
		runner().withPropertyValues("distlock.default-ttl=0s").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.default-ttl"));
		runner().withPropertyValues("distlock.default-ttl=366d").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.default-ttl must be at most 365 days"));
		runner().withPropertyValues("distlock.max-hold=0s").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.max-hold must be at least 1ms"));
		runner().withPropertyValues("distlock.max-hold=366d").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.max-hold must be at most 365 days"));
		runner().withPropertyValues("distlock.fair-entry-ttl=366d").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.fair-entry-ttl must be at most 365 days"));
		runner().withPropertyValues("distlock.renewal-ratio=1.5").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.renewal-ratio"));
		runner().withPropertyValues("distlock.default-wait-time=-1s").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.default-wait-time"));
		runner().withPropertyValues("distlock.local-hand-overs=-1").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.local-hand-overs"));
		runner().withPropertyValues("distlock.replica-ack-timeout=0s").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.replica-ack-timeout"));
		runner().withPropertyValues("distlock.key-prefix=a{b}").run(context -> assertThat(context).hasFailed()
			.getFailure().rootCause().hasMessageContaining("distlock.key-prefix"));
		runner().withPropertyValues("spring.data.redis.timeout=1s", "distlock.replica-acks=1",
				"distlock.replica-ack-timeout=1s")
			.run(context -> assertThat(context).hasFailed().getFailure().rootCause()
				.hasMessageContaining("distlock.replica-ack-timeout (1000ms)")
				.hasMessageContaining("spring.data.redis.timeout (1000ms)"));
	}

	@Test
	void replicaAcknowledgementPropertiesBind() {
		// no acquisition here: the test's Redis has no replica (ReplicaAcksIntegrationTests has one)
		runner().withPropertyValues("distlock.replica-acks=2", "distlock.replica-ack-timeout=250ms").run(context -> {
			LockProperties properties = context.getBean(LockProperties.class);
			assertThat(properties.getReplicaAcks()).isEqualTo(2);
			assertThat(properties.getReplicaAckTimeout()).isEqualTo(Duration.ofMillis(250));
		});
	}

	@Test
	@SuppressWarnings("unchecked")
	void ideMetadataDescribesEveryProperty() throws Exception {
		try (InputStream json = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			assertThat(json).as("generated metadata").isNotNull();
			List<Map<String, Object>> properties = JsonPath.parse(json).read("$.properties");
			Map<String, Map<String, Object>> byName = new java.util.HashMap<>();
			properties.forEach(property -> byName.put((String) property.get("name"), property));
			// the processor also describes the locks endpoint's own management properties
			assertThat(byName).containsKeys("management.endpoint.locks.access", "management.endpoint.locks.cache.time-to-live",
					"management.endpoint.locks.show-values", "management.endpoint.locks.roles");
			assertThat(byName.get("management.endpoint.locks.show-values")).containsEntry("defaultValue", "when-authorized");
			byName.keySet().removeIf(name -> name.startsWith("management.endpoint.locks."));
			List<String> current = DeprecatedLockProperties.PROPERTIES.stream().map(name -> "distlock." + name).toList();
			List<String> deprecated = DeprecatedLockProperties.PROPERTIES.stream().map(name -> "lock." + name).toList();
			// the preflight's, the replica acknowledgement's, Redlock's, fair locks', maxHold's and the holder label's
			// properties are new: they never had a lock.* name
			List<String> preflight = List.of("distlock.preflight.enabled", "distlock.preflight.mode",
					"distlock.preflight.timeout", "distlock.replica-acks", "distlock.replica-ack-timeout",
					"distlock.redlock.nodes", "distlock.redlock.node-timeout", "distlock.redlock.drift-factor",
					"distlock.redlock.restart-quarantine", "distlock.fair-entry-ttl", "distlock.max-hold",
					"distlock.max-hold-interrupt", "distlock.holder.application", "distlock.holder.instance",
					"distlock.holder.store-label");
			assertThat(byName.keySet()).containsExactlyInAnyOrderElementsOf(java.util.stream.Stream
				.of(current, deprecated, preflight).flatMap(List::stream).toList());
			byName.values().forEach(property -> assertThat(property.get("description"))
				.as("description of %s", property.get("name"))
				.asString()
				.isNotBlank());
			// each old name is deprecated in favour of its new one, with the same type
			for (String name : DeprecatedLockProperties.PROPERTIES) {
				Map<String, Object> old = byName.get("lock." + name);
				assertThat(old).as("lock.%s", name)
					.containsEntry("type", byName.get("distlock." + name).get("type"))
					.containsEntry("deprecated", true)
					.doesNotContainKey("defaultValue");
				assertThat((Map<String, Object>) old.get("deprecation")).as("deprecation of lock.%s", name)
					.containsEntry("level", "warning")
					.containsEntry("replacement", "distlock." + name);
			}
			assertThat(byName.get("distlock.default-ttl")).containsEntry("type", "java.time.Duration")
				.containsEntry("defaultValue", "30s");
			assertThat(byName.get("distlock.default-wait-time")).containsEntry("defaultValue", "5s");
			assertThat(byName.get("distlock.replica-acks")).containsEntry("defaultValue", 0);
			assertThat(byName.get("distlock.fair-entry-ttl")).containsEntry("type", "java.time.Duration")
				.containsEntry("defaultValue", "2s");
			assertThat(byName.get("distlock.replica-ack-timeout")).containsEntry("type", "java.time.Duration")
				.containsEntry("defaultValue", "500ms");
			assertThat(byName.get("distlock.local-hand-overs")).containsEntry("defaultValue", 4);
			assertThat(byName.get("distlock.max-hold")).containsEntry("type", "java.time.Duration")
				.doesNotContainKey("defaultValue");
			assertThat(byName.get("distlock.max-hold-interrupt")).containsEntry("type", "java.lang.Boolean")
				.containsEntry("defaultValue", false);
			// no default: unset, the node timeout follows the nodes' reply times (issue 31)
			assertThat(byName.get("distlock.redlock.node-timeout")).containsEntry("type", "java.time.Duration")
				.doesNotContainKey("defaultValue");
			assertThat(byName.get("distlock.redlock.nodes")).containsEntry("type", "java.util.List<java.lang.String>");
			assertThat(byName.get("distlock.key-prefix")).containsEntry("defaultValue", "lock");
			assertThat(byName.get("distlock.enabled")).containsEntry("defaultValue", true);
			assertThat(byName.get("distlock.renewal-ratio")).containsKey("defaultValue");
			assertThat(byName.get("distlock.advice-order")).containsEntry("defaultValue", Integer.MIN_VALUE);
			assertThat(byName.get("distlock.health.renewal-failure-status")).containsEntry("defaultValue", "down");
			assertThat(byName.get("distlock.actuator.force-release.enabled")).containsEntry("defaultValue", false);
			assertThat(byName.get("distlock.preflight.enabled")).containsEntry("defaultValue", true);
			assertThat(byName.get("distlock.preflight.mode")).containsEntry("defaultValue", "fail");
			assertThat(byName.get("distlock.preflight.timeout")).containsEntry("defaultValue", "10s");
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnInMemoryLockService {

		@Bean
		InMemoryLockService inMemoryLockService() {
			return new InMemoryLockService();
		}

	}

	public static class ShortLeases {

		@DistributedLock(key = "'tight'", ttl = "3s")
		public void tight() {
		}

		@DistributedLock(key = "'roomy'", ttl = "10s")
		public void roomy() {
		}

		@DistributedLock(key = "'fixed'", ttl = "1s", fixedLease = true)
		public void fixed() {
		}

	}

	/** Public: with a filtered class loader, its proxy is defined in another class loader than the test's. */
	public static class Ledger {

		@DistributedLock(key = "'ledger:' + #account", name = "ledger", waitTime = "200ms")
		public Optional<Lease> post(String account) {
			return LockContext.current();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnLockService {

		static final LockService INSTANCE = new InMemoryLockService();

		@Bean
		LockService myLocks() {
			return INSTANCE;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class ProxyMode {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(mode = AdviceMode.ASPECTJ)
	static class AspectJMode {

	}

}
