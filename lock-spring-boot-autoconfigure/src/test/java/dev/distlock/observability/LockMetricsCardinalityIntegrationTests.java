package dev.distlock.observability;

import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.LockMetricsAutoConfiguration;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import dev.distlock.redis.LockTestSupport;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The meters of an annotated method, gauges included, are tagged by its lock name, so their number does not grow with
 * its keys.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockMetricsCardinalityIntegrationTests {

	static ApplicationContextRunner runner(RedisServer redis) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					LockMetricsAutoConfiguration.class, MetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s")
			.withUserConfiguration(Beans.class);
	}

	@Test
	void tenThousandKeysUnderOneAnnotatedMethodMakeOneNameTagValue(RedisServer redis) {
		runner(redis).run(context -> {
			Catalog catalog = context.getBean(Catalog.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			catalog.touch(0);
			Set<Meter.Id> metersAfterFirstCall = registry.getMeters().stream().map(Meter::getId).collect(Collectors.toSet());
			for (int id = 1; id < 10_000; id++) {
				catalog.touch(id);
			}
			assertThat(registry.find(LockMetrics.ACQUIRE).timers())
				.extracting(timer -> timer.getId().getTag("name"))
				.containsOnly("Catalog.touch");
			Timer acquired = registry.get(LockMetrics.ACQUIRE).tag("outcome", "acquired").timer();
			assertThat(acquired.count()).isEqualTo(10_000);
			assertThat(registry.get(LockMetrics.HELD).timer().count()).isEqualTo(10_000);
			assertThat(registry.getMeters().stream().map(Meter::getId).collect(Collectors.toSet()))
				.isEqualTo(metersAfterFirstCall);
			assertThat(registry.find(LockMetrics.ACQUIRE).timers()).hasSize(AcquisitionOutcome.values().length);
			// the gauges too: one per meter for the one name, reading 0 once every call returned
			for (String gauge : new String[] { LockServiceMetrics.LEASES_HELD, LockServiceMetrics.WAITERS }) {
				assertThat(registry.find(gauge).gauges()).singleElement().satisfies(meter -> {
					assertThat(meter.getId().getTags()).containsExactly(Tag.of("name", "Catalog.touch"));
					assertThat(meter.value()).isZero();
				});
			}
			assertThat(LockTestSupport.leftKeys(redis)).isEmpty();
		});
	}

	@Test
	void noMetersWithoutAMeterRegistryAndNoneWithoutMicrometer(RedisServer redis) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					LockMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.port=" + redis.port())
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockMetrics.class));
		runner(redis).withClassLoader(new FilteredClassLoader("io.micrometer.core"))
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockMetrics.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		Catalog catalog() {
			return new Catalog();
		}

	}

}
