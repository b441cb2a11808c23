package dev.distlock.autoconfigure;

import dev.distlock.core.LockOperatorView;
import dev.distlock.observability.LockMetrics;
import dev.distlock.observability.LockServiceMetrics;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configures lock meters when the application has a {@link MeterRegistry}: a {@link LockMetrics} listener, which
 * the lock service picks up with the other {@code LockListener} beans, and the gauges of the one
 * {@link LockOperatorView} bean, whatever the engine (none without one). Neither needs Spring Data Redis.
 * Turn them off with {@code management.metrics.enable.distlock=false}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnLocksEnabled
public final class LockMetricsAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LockMetricsAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	LockMetrics lockMetrics(MeterRegistry meterRegistry) {
		return new LockMetrics(meterRegistry);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnSingleCandidate(LockOperatorView.class)
	LockServiceMetrics lockServiceMetrics(LockOperatorView operatorView) {
		return new LockServiceMetrics(operatorView);
	}

}
