package dev.distlock.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import dev.distlock.actuate.ForceReleaseLocksEndpoint.ForceReleaseDescriptor;
import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.actuate.LocksEndpoint.LocksDescriptor;
import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.core.Lease;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.core.RenewalStatus;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.observability.LockMetrics;
import dev.distlock.observability.LockServiceMetrics;
import dev.distlock.observability.ObservedLockService;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The endpoint, the health indicator and the gauges read a {@link LockOperatorView}, not the Redis engine: they work on
 * an engine of the application's own without Spring Data Redis on the classpath, back off when the one engine offers
 * no view, and on Redis find the engine bean beside the observed {@code LockService} that wraps it.
 */
@ExtendWith(RedisServerExtension.class)
class OperatorViewAutoConfigurationTests {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	/**
	 * Every auto-configuration of the starter that may apply, with observations and meters on (Boot's metrics
	 * auto-configuration binds the gauges to the registry, as in an application).
	 */
	private static ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					LockObservationAutoConfiguration.class, LockMetricsAutoConfiguration.class,
					EndpointAutoConfiguration.class, LocksEndpointAutoConfiguration.class,
					LocksHealthContributorAutoConfiguration.class, LockPreflightAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.withBean(ObservationRegistry.class, ObservationRegistry::create)
			.withPropertyValues("management.endpoints.web.exposure.include=locks",
					"management.endpoint.locks.show-values=always");
	}

	private static ApplicationContextRunner withoutSpringDataRedis() {
		return runner().withClassLoader(new FilteredClassLoader("org.springframework.data.redis"));
	}

	@Test
	void anotherEnginesViewGetsTheEndpointTheHealthAndTheGaugesWithoutSpringDataRedis() throws Exception {
		withoutSpringDataRedis().withBean(InMemoryOperatorLockService.class).run(context -> {
			assertThat(context).hasNotFailed()
				.doesNotHaveBean(RedisLockService.class)
				.hasSingleBean(DistributedLockBeanPostProcessor.class)
				.hasSingleBean(ObservedLockService.class)
				.hasSingleBean(LockOperatorView.class)
				.hasSingleBean(LockMetrics.class)
				.hasSingleBean(LockServiceMetrics.class)
				.hasSingleBean(LocksEndpoint.class)
				.doesNotHaveBean(ForceReleaseLocksEndpoint.class)
				.hasSingleBean(LocksHealthIndicator.class);
			InMemoryOperatorLockService engine = context.getBean(InMemoryOperatorLockService.class);
			// locks are taken through the observed LockService, the primary one, around the engine
			LockService locks = context.getBean(LockService.class);
			assertThat(locks).isInstanceOf(ObservedLockService.class);
			assertThat(((ObservedLockService) locks).getDelegate()).isSameAs(engine);

			LockRequest request = LockRequest.of("ledger:acct-1", Duration.ofSeconds(30), Duration.ZERO).withName("ledger");
			Lease lease = locks.acquire(request);
			ExecutorService waiter = Executors.newSingleThreadExecutor();
			try {
				CompletableFuture<Optional<Lease>> waited = CompletableFuture.supplyAsync(
						() -> locks.tryAcquire(LockRequest.of("ledger:acct-1", Duration.ofSeconds(30), DEADLINE)
							.withName("ledger")),
						waiter);
				await().atMost(DEADLINE).until(() -> engine.waitingThreads() == 1);

				LocksDescriptor described = context.getBean(LocksEndpoint.class).locks(SecurityContext.NONE);
				assertThat(described.clientId()).isEqualTo("in-memory");
				assertThat(described.waitingThreads()).isEqualTo(1);
				assertThat(described.leases()).singleElement().satisfies(leased -> {
					assertThat(leased.key()).isEqualTo("ledger:acct-1");
					assertThat(leased.name()).isEqualTo("ledger");
					assertThat(leased.owner()).isEqualTo(lease.owner());
					assertThat(leased.fencingToken()).isEqualTo(lease.fencingToken());
					assertThat(leased.ttlMillis()).isEqualTo(30_000);
				});

				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get(LockServiceMetrics.LEASES_HELD).tag("name", "ledger").gauge().value())
					.isEqualTo(1);
				assertThat(meters.get(LockServiceMetrics.WAITERS).tag("name", "ledger").gauge().value()).isEqualTo(1);

				Health health = context.getBean(LocksHealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsEntry("heldLeases", 1)
					.containsEntry("lostLeases", 0)
					.containsEntry("waitingThreads", 1)
					.doesNotContainKey("preflight");

				lease.release();
				Lease handedOver = waited.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).orElseThrow();
				assertThat(context.getBean(LocksEndpoint.class).locks(SecurityContext.NONE).leases()).singleElement()
					.satisfies(leased -> assertThat(leased.fencingToken()).isEqualTo(handedOver.fencingToken()));
				waiter.submit(handedOver::release).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
				assertThat(engine.activeLeases()).isEmpty();
			}
			finally {
				waiter.shutdownNow();
			}

			engine.setRenewalStatus(new RenewalStatus(2, Instant.parse("2026-01-01T00:00:00Z"), "store unreachable"));
			Health failing = context.getBean(LocksHealthIndicator.class).health();
			assertThat(failing.getStatus()).isEqualTo(Status.DOWN);
			assertThat(failing.getDetails()).containsEntry("leasesFailingRenewal", 2)
				.containsEntry("renewalsFailingSince", "2026-01-01T00:00:00Z")
				.containsEntry("lastRenewalError", "store unreachable");
		});
	}

	@Test
	void theOperatorViewsBackOffWhenTheOnlyEngineOffersNone() {
		withoutSpringDataRedis().withBean(InMemoryLockService.class).run(context -> assertThat(context).hasNotFailed()
			.hasSingleBean(DistributedLockBeanPostProcessor.class)
			.hasSingleBean(LockMetrics.class)
			.doesNotHaveBean(LockOperatorView.class)
			.doesNotHaveBean(LockServiceMetrics.class)
			.doesNotHaveBean(LocksEndpoint.class)
			.doesNotHaveBean(LocksHealthIndicator.class));
	}

	@Test
	void forcedReleaseOnAnEngineThatCannotFailsTheStartNamingTheProperty() {
		withoutSpringDataRedis().withBean(InMemoryOperatorLockService.class)
			.withPropertyValues("distlock.actuator.force-release.enabled=true")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("distlock.actuator.force-release.enabled=true")
				.hasMessageContaining(InMemoryOperatorLockService.class.getName())
				.hasMessageContaining("LockForceReleaser"));
	}

	@Test
	void onRedisTheEngineBeanIsTheOneViewBesideTheObservedService() {
		runner().withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
				"distlock.actuator.force-release.enabled=true")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(ObservedLockService.class)
					.hasSingleBean(LockOperatorView.class)
					.hasSingleBean(LockServiceMetrics.class)
					.hasSingleBean(LocksHealthIndicator.class)
					.hasSingleBean(ForceReleaseLocksEndpoint.class);
				RedisLockService engine = context.getBean(RedisLockService.class);
				assertThat(context.getBean(LockOperatorView.class)).isSameAs(engine);
				LockService locks = context.getBean(LockService.class);
				assertThat(locks).isInstanceOf(ObservedLockService.class);

				Lease lease = locks.acquire(
						LockRequest.of("view:redis", Duration.ofSeconds(30), Duration.ZERO).withName("redis-view"));
				ForceReleaseLocksEndpoint endpoint = context.getBean(ForceReleaseLocksEndpoint.class);
				assertThat(endpoint.locks(SecurityContext.NONE).leases()).singleElement()
					.satisfies(leased -> assertThat(leased.owner()).isEqualTo(lease.owner()));
				assertThat(context.getBean(MeterRegistry.class)
					.get(LockServiceMetrics.LEASES_HELD)
					.tag("name", "redis-view")
					.gauge()
					.value()).isEqualTo(1);
				ForceReleaseDescriptor released = endpoint.forceRelease(new String[] { "view:redis" },
						SecurityContext.NONE);
				assertThat(released.released()).isTrue();
				assertThat(released.formerOwner()).isEqualTo(lease.owner());
				assertThat(redis.execute("EXISTS", "lock:{view:redis}")).isEqualTo(0L);
			});
	}

}
