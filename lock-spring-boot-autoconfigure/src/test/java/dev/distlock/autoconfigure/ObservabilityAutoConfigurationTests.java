package dev.distlock.autoconfigure;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.interceptor.DistributedLockBeanPostProcessor;
import dev.distlock.observability.LockMetrics;
import dev.distlock.observability.LockServiceMetrics;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** When the metrics, endpoint and health auto-configurations apply, and when they back off. */
@ExtendWith(RedisServerExtension.class)
class ObservabilityAutoConfigurationTests {

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
					DistributedLockAutoConfiguration.class, LockMetricsAutoConfiguration.class, EndpointAutoConfiguration.class,
					LocksEndpointAutoConfiguration.class, LocksHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@Test
	void theHealthIndicatorIsOnByDefaultAndTheEndpointOnlyWhenExposed() {
		runner().run(context -> {
			assertThat(context).hasSingleBean(LocksHealthIndicator.class).doesNotHaveBean(LocksEndpoint.class);
			assertThat(context.getBean(LocksHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
		});
		runner().withPropertyValues("management.endpoints.web.exposure.include=locks").run(context -> {
			assertThat(context).hasSingleBean(LocksEndpoint.class).doesNotHaveBean(ForceReleaseLocksEndpoint.class);
		});
		runner().withPropertyValues("management.endpoints.web.exposure.include=locks",
				"distlock.actuator.force-release.enabled=true")
			.run(context -> assertThat(context).hasSingleBean(ForceReleaseLocksEndpoint.class));
	}

	@Test
	void theHealthIndicatorCanBeTurnedOff() {
		runner().withPropertyValues("management.health.locks.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(LocksHealthIndicator.class));
	}

	@Test
	void nothingWithoutActuatorOrHealthOnTheClasspath() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
					DistributedLockAutoConfiguration.class, LocksEndpointAutoConfiguration.class,
					LocksHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"management.endpoints.web.exposure.include=locks")
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate", "org.springframework.boot.health"))
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(RedisLockService.class)
				.doesNotHaveBean(LocksEndpoint.class)
				.doesNotHaveBean(LocksHealthIndicator.class));
	}

	@Test
	void theOperatorViewsBackOffOnAnEngineWithoutAView() {
		// another engine, with Spring Data Redis on the classpath
		runner().withBean(SimpleMeterRegistry.class)
			.withBean(InMemoryLockService.class)
			.withPropertyValues("management.endpoints.web.exposure.include=locks")
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(DistributedLockBeanPostProcessor.class)
				.doesNotHaveBean(RedisLockService.class)
				.doesNotHaveBean(LockServiceMetrics.class)
				.doesNotHaveBean(LocksEndpoint.class)
				.doesNotHaveBean(LocksHealthIndicator.class));
		// and without it: the LockMetrics listener needs no Redis, the operator views need a LockOperatorView
		runner().withBean(SimpleMeterRegistry.class)
			.withBean(InMemoryLockService.class)
			.withPropertyValues("management.endpoints.web.exposure.include=locks")
			.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(DistributedLockBeanPostProcessor.class)
				.hasSingleBean(LockMetrics.class)
				.doesNotHaveBean(LockServiceMetrics.class)
				.doesNotHaveBean(LocksEndpoint.class)
				.doesNotHaveBean(LocksHealthIndicator.class));
	}

	@Test
	void metersOnlyWithAMeterRegistry() {
		runner().run(context -> assertThat(context).doesNotHaveBean(LockMetrics.class));
		runner().withBean(SimpleMeterRegistry.class)
			.run(context -> assertThat(context).hasSingleBean(LockMetrics.class).hasSingleBean(LockServiceMetrics.class));
	}

	@Test
	void renewalFailureStatusesMapFromPropertyValues() {
		assertThat(LocksHealthIndicator.status("down")).isEqualTo(Status.DOWN);
		assertThat(LocksHealthIndicator.status("out-of-service")).isEqualTo(Status.OUT_OF_SERVICE);
		assertThat(LocksHealthIndicator.status("OUT_OF_SERVICE")).isEqualTo(Status.OUT_OF_SERVICE);
		assertThat(LocksHealthIndicator.status("degraded").getCode()).isEqualTo("DEGRADED");
	}

	@Test
	void everythingIsOffWithLockEnabledFalse() {
		runner().withBean(SimpleMeterRegistry.class)
			.withPropertyValues("distlock.enabled=false", "management.endpoints.web.exposure.include=locks")
			.run(context -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockMetrics.class)
				.doesNotHaveBean(LocksEndpoint.class)
				.doesNotHaveBean(LocksHealthIndicator.class));
	}

}
