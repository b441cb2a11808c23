package dev.distlock.autoconfigure;

import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.core.LockOperatorView;
import dev.distlock.preflight.LockPreflightRunner;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Auto-configures the {@code locks} health indicator when Boot's health support is present; turn it off with
 * {@code management.health.locks.enabled=false}. It reads the one {@link LockOperatorView} bean, whatever the engine, and
 * backs off without one; the startup preflight's findings join it when there is a preflight (the Redis engine's).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnSingleCandidate(LockOperatorView.class)
@EnableConfigurationProperties(LockProperties.class)
@Import(DeprecatedLockProperties.Registrar.class)
public final class LocksHealthContributorAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LocksHealthContributorAutoConfiguration() {
	}

	@Bean
	@ConditionalOnEnabledHealthIndicator("locks")
	@ConditionalOnMissingBean(name = "locksHealthIndicator")
	LocksHealthIndicator locksHealthIndicator(LockOperatorView operatorView, LockProperties properties,
			ObjectProvider<LockPreflightRunner> preflight) {
		return new LocksHealthIndicator(operatorView,
				LocksHealthIndicator.status(properties.getHealth().getRenewalFailureStatus()), preflight.getIfUnique());
	}

}
