package dev.distlock.testing.autoconfigure;

import java.time.Duration;

import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.LockMetricsAutoConfiguration;
import dev.distlock.autoconfigure.LockPreflightAutoConfiguration;
import dev.distlock.autoconfigure.LocksEndpointAutoConfiguration;
import dev.distlock.autoconfigure.LocksHealthContributorAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedlockLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import dev.distlock.observability.LockMetrics;
import dev.distlock.observability.LockServiceMetrics;
import dev.distlock.preflight.LockPreflightRunner;
import dev.distlock.redis.RedisLockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.InMemoryLockStore;
import dev.distlock.testing.LockClock;
import dev.distlock.testing.LockScenarios;
import dev.distlock.testing.ManualLockClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code distlock.in-memory.enabled=true}: the in-memory engine takes the Redis engine's place, loudly, with the rest of
 * the starter unchanged; without the property (or with a {@code LockService} of the application's) nothing changes.
 * The auto-configurations are the application's real ones, Boot's Redis included.
 */
@ExtendWith(OutputCaptureExtension.class)
class InMemoryLocksAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class, DataRedisAutoConfiguration.class,
				InMemoryLocksAutoConfiguration.class, RedlockLockServiceAutoConfiguration.class,
				RedisLockServiceAutoConfiguration.class, LockPreflightAutoConfiguration.class,
				DistributedLockAutoConfiguration.class, LockMetricsAutoConfiguration.class,
				EndpointAutoConfiguration.class, LocksEndpointAutoConfiguration.class,
				LocksHealthContributorAutoConfiguration.class))
		.withBean(SimpleMeterRegistry.class)
		.withPropertyValues("management.endpoints.web.exposure.include=locks",
				"management.endpoint.locks.show-values=always");

	@Test
	void thePropertyPutsTheInMemoryEngineInTheRedisEnginesPlace(CapturedOutput output) {
		this.runner.withPropertyValues("distlock.in-memory.enabled=true").run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(InMemoryLockService.class)
				.hasSingleBean(LockService.class)
				.doesNotHaveBean(RedisLockService.class)
				.doesNotHaveBean(LockPreflightRunner.class)
				.hasSingleBean(LockScenarios.class)
				.hasSingleBean(LockMetrics.class);
			InMemoryLockService engine = context.getBean(InMemoryLockService.class);
			assertThat(context.getBean(LockScenarios.class).store()).isSameAs(engine.store())
				.isSameAs(context.getBean(InMemoryLockStore.class));
			assertThat(engine.clock()).isEqualTo(LockClock.system());
			assertThat(output).containsOnlyOnce("Locks run on the in-memory engine of dev.distlock:lock-test")
				.contains("they exclude only within this JVM, NOT other instances of the application");
			Health health = context.getBean(LocksHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("engine", "in-memory (single instance only)")
				.containsEntry("heldLeases", 0);
			assertThat(context).hasSingleBean(LockServiceMetrics.class);
			try (Lease lease = engine.acquire("k", Duration.ofSeconds(30), Duration.ZERO)) {
				assertThat(context.getBean(LocksEndpoint.class).locks(SecurityContext.NONE).leases()).singleElement()
					.satisfies((leased) -> assertThat(leased.fencingToken()).isEqualTo(lease.fencingToken()));
			}
		});
	}

	@Test
	void theStartupValidationChecksTheDeclarationsAsOnRedis() {
		this.runner.withPropertyValues("distlock.in-memory.enabled=true")
			.withBean(BadDeclaration.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				Throwable cause = context.getStartupFailure();
				while (!(cause instanceof InvalidLockDeclarationException) && cause.getCause() != null) {
					cause = cause.getCause();
				}
				assertThat(cause).isInstanceOf(InvalidLockDeclarationException.class)
					.hasMessageContaining(BadDeclaration.class.getName() + ".buy(String)")
					.hasMessageContaining("#skew");
			});
	}

	@Test
	void theHealthShowsFailingRenewalsAsTheStartersDoes() {
		this.runner.withPropertyValues("distlock.in-memory.enabled=true", "distlock.in-memory.manual-clock=true",
				"distlock.health.renewal-failure-status=out-of-service")
			.run((context) -> {
				InMemoryLockService engine = context.getBean(InMemoryLockService.class);
				LockScenarios locks = context.getBean(LockScenarios.class);
				assertThat(engine.clock()).isInstanceOf(ManualLockClock.class);
				engine.acquire("k", Duration.ofSeconds(30), Duration.ZERO);
				locks.unreachable();
				locks.advance(Duration.ofSeconds(10));
				Health health = context.getBean(HealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
				assertThat(health.getDetails()).containsEntry("engine", "in-memory (single instance only)")
					.containsEntry("leasesFailingRenewal", 1);
			});
	}

	@Test
	void withoutThePropertyTheRedisEngineRuns(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(RedisLockService.class)
				.doesNotHaveBean(InMemoryLockService.class)
				.doesNotHaveBean(LockScenarios.class);
			assertThat(context.getBean(LocksHealthIndicator.class).health().getDetails()).doesNotContainKey("engine");
		});
		assertThat(output).doesNotContain("in-memory engine");
	}

	@Test
	void anApplicationsOwnLockServiceStaysAndNothingWarns(CapturedOutput output) {
		InMemoryLockService own = InMemoryLockService.builder().build();
		this.runner.withPropertyValues("distlock.in-memory.enabled=true")
			.withBean("ownLockService", LockService.class, () -> own)
			.run((context) -> assertThat(context).hasSingleBean(LockService.class)
				.doesNotHaveBean(InMemoryLockStore.class)
				.doesNotHaveBean(LockScenarios.class));
		assertThat(output).doesNotContain("in-memory engine");
	}

	@Test
	void locksTurnedOffStayOff() {
		this.runner.withPropertyValues("distlock.in-memory.enabled=true", "distlock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LockService.class));
	}

	@Test
	void withoutBootsHealthTheEngineRunsWithoutItsIndicator() {
		this.runner.withPropertyValues("distlock.in-memory.enabled=true")
			.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(InMemoryLockService.class)
				.doesNotHaveBean(LocksHealthIndicator.class));
	}

	@Test
	void theTestsAutoConfigurationIsQuiet(CapturedOutput output) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					InMemoryLocksTestAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(InMemoryLockService.class)
				.doesNotHaveBean(RedisLockService.class));
		assertThat(output).doesNotContain("in-memory engine");
	}

	static class BadDeclaration {

		@DistributedLock(key = "'stock:' + #skew")
		public void buy(String sku) {
		}

	}

}
