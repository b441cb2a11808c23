package dev.distlock.autoconfigure;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.redis.RedisLockService;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configures the {@code locks} actuator endpoint when Actuator is present and the endpoint is available
 * ({@code management.endpoints.web.exposure.include=locks}). Its forced release exists only with
 * {@code distlock.actuator.force-release.enabled=true}. Owner ids and fencing tokens are shown as
 * {@code management.endpoint.locks.show-values} says ({@code when-authorized} by default, as for {@code env}).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class)
@ConditionalOnClass({ ConditionalOnAvailableEndpoint.class, RedisConnectionFactory.class })
@ConditionalOnSingleCandidate(RedisLockService.class)
@EnableConfigurationProperties({ LockProperties.class, LocksEndpointProperties.class })
@Import(DeprecatedLockProperties.Registrar.class)
public final class LocksEndpointAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LocksEndpointAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	LocksEndpoint locksEndpoint(RedisLockService lockService, LockProperties properties,
			LocksEndpointProperties endpointProperties, ApplicationEventPublisher eventPublisher) {
		if (properties.getActuator().getForceRelease().isEnabled()) {
			return new ForceReleaseLocksEndpoint(lockService, eventPublisher, endpointProperties.getShowValues(),
					endpointProperties.getRoles());
		}
		return new LocksEndpoint(lockService, endpointProperties.getShowValues(), endpointProperties.getRoles());
	}

}
