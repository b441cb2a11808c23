package dev.distlock.testing;

import java.time.Duration;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.LockMetricsAutoConfiguration;
import dev.distlock.autoconfigure.LocksEndpointAutoConfiguration;
import dev.distlock.autoconfigure.LocksHealthContributorAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.observability.LockMetrics;
import dev.distlock.observability.LockServiceMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's auto-configurations, unchanged, on the in-memory engine declared as the application's bean: the Redis
 * engine backs off, {@code @DistributedLock} locks through it, and the {@code locks} endpoint (with its forced
 * release), the health indicator and the gauges read it as they read the Redis engine.
 */
class InMemoryEngineAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class, DataRedisAutoConfiguration.class,
				RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
				LockMetricsAutoConfiguration.class, EndpointAutoConfiguration.class, LocksEndpointAutoConfiguration.class,
				LocksHealthContributorAutoConfiguration.class))
		.withBean(SimpleMeterRegistry.class)
		.withUserConfiguration(EngineConfiguration.class)
		.withPropertyValues("management.endpoints.web.exposure.include=locks",
				"management.endpoint.locks.show-values=always", "distlock.actuator.force-release.enabled=true");

	@Test
	void theEndpointTheHealthAndTheGaugesReadTheInMemoryEngine() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(LockService.class)
				.hasSingleBean(LockServiceMetrics.class)
				.hasSingleBean(LocksHealthIndicator.class)
				.hasSingleBean(ForceReleaseLocksEndpoint.class);
			InMemoryLockService engine = context.getBean(InMemoryLockService.class);
			Counted counted = context.getBean(Counted.class);
			assertThat(counted.next("sku-1")).isEqualTo(1);
			assertThat(counted.next("sku-1")).isEqualTo(2);
			assertThat(engine.store().history().entries(LockHistory.Kind.ACQUIRED)).hasSize(2)
				.allSatisfy((entry) -> assertThat(entry.key()).isEqualTo("stock:sku-1"));

			Lease lease = engine.acquire(LockRequest.of("ledger:1", Duration.ofSeconds(30), Duration.ZERO).withName("ledger"));
			ForceReleaseLocksEndpoint endpoint = context.getBean(ForceReleaseLocksEndpoint.class);
			assertThat(endpoint.locks(SecurityContext.NONE).leases()).singleElement().satisfies((leased) -> {
				assertThat(leased.key()).isEqualTo("ledger:1");
				assertThat(leased.owner()).isEqualTo(lease.owner());
				assertThat(leased.fencingToken()).isEqualTo(lease.fencingToken());
			});
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get(LockServiceMetrics.LEASES_HELD).tag("name", "ledger").gauge().value()).isEqualTo(1);
			assertThat(meters.get(LockMetrics.ACQUIRE).tag("name", "stock").tag("outcome", "acquired").timer().count())
				.isEqualTo(2);
			Health health = context.getBean(LocksHealthIndicator.class).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("heldLeases", 1);

			ManualLockClock clock = (ManualLockClock) engine.clock();
			engine.store().makeUnreachable();
			clock.advance(Duration.ofSeconds(10));
			Health failing = context.getBean(LocksHealthIndicator.class).health();
			assertThat(failing.getStatus()).isEqualTo(Status.DOWN);
			assertThat(failing.getDetails()).containsEntry("leasesFailingRenewal", 1);
			engine.store().makeReachable();
			assertThat(context.getBean(LocksHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);

			assertThat(endpoint.forceRelease(new String[] { "ledger:1" }, SecurityContext.NONE).released()).isTrue();
			assertThat(engine.isLocked("ledger:1")).isFalse();
			assertThat(lease.isOwned()).isFalse();
			assertThat(lease.isLost()).isTrue();
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class EngineConfiguration {

		@Bean
		InMemoryLockService lockService(ObjectProvider<LockListener> listeners, ApplicationEventPublisher events) {
			InMemoryLockServiceBuilder builder = InMemoryLockService.builder().clock(LockClock.manual())
				.eventPublisher(events);
			listeners.orderedStream().forEach(builder::listener);
			return builder.build();
		}

		@Bean
		Counted counted() {
			return new Counted();
		}

	}

	static class Counted {

		private int count;

		@DistributedLock(key = "'stock:' + #sku", name = "stock", ttl = "10s", waitTime = "1s")
		public int next(String sku) {
			return ++this.count;
		}

	}

}
