package dev.distlock.autoconfigure;

import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.preflight.LockPreflightRunner;
import dev.distlock.redis.RedisLockService;

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
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configures the {@code locks} health indicator when Boot's health support is present; turn it off with
 * {@code management.health.locks.enabled=false}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class, RedisConnectionFactory.class })
@ConditionalOnSingleCandidate(RedisLockService.class)
@EnableConfigurationProperties(LockProperties.class)
@Import(DeprecatedLockProperties.Registrar.class)
public final class LocksHealthContributorAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LocksHealthContributorAutoConfiguration() {
	}

	@Bean
	@ConditionalOnEnabledHealthIndicator("locks")
	@ConditionalOnMissingBean(name = "locksHealthIndicator")
	LocksHealthIndicator locksHealthIndicator(RedisLockService lockService, LockProperties properties,
			ObjectProvider<LockPreflightRunner> preflight) {
		return new LocksHealthIndicator(lockService,
				LocksHealthIndicator.status(properties.getHealth().getRenewalFailureStatus()), preflight.getIfUnique());
	}

}
