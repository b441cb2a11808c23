package dev.distlock.autoconfigure;

import dev.distlock.core.LockService;
import dev.distlock.integration.LockServiceLockRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Auto-configures Spring Integration's {@code LockRegistry} on the application's {@link LockService} when
 * {@code spring-integration-core} is on the classpath: a {@link LockServiceLockRegistry} whose leases last
 * {@code distlock.default-ttl} (renewed while held), so that {@code LockRegistryLeaderInitiator} and Spring
 * Integration's lock-based components use this engine. An application's own {@code LockRegistry} bean (a
 * {@code RedisLockRegistry}, a {@code JdbcLockRegistry}, or a {@code LockServiceLockRegistry} with other settings)
 * replaces it.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = { RedisLockServiceAutoConfiguration.class, LockObservationAutoConfiguration.class })
@ConditionalOnClass(LockRegistry.class)
@ConditionalOnSingleCandidate(LockService.class)
@ConditionalOnLocksEnabled
@EnableConfigurationProperties(LockProperties.class)
public final class LockRegistryAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LockRegistryAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean(LockRegistry.class)
	LockServiceLockRegistry lockServiceLockRegistry(LockService lockService, LockProperties properties) {
		return new LockServiceLockRegistry(lockService, properties.getDefaultTtl());
	}

}
