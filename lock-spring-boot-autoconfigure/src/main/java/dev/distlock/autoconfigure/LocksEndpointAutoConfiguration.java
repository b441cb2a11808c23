package dev.distlock.autoconfigure;

import dev.distlock.actuate.ForceReleaseLocksEndpoint;
import dev.distlock.actuate.LocksEndpoint;
import dev.distlock.core.LockForceReleaser;
import dev.distlock.core.LockOperatorView;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;

/**
 * Auto-configures the {@code locks} actuator endpoint when Actuator is present and the endpoint is available
 * ({@code management.endpoints.web.exposure.include=locks}). Its forced release exists only with
 * {@code distlock.actuator.force-release.enabled=true}. Owner ids and fencing tokens are shown as
 * {@code management.endpoint.locks.show-values} says ({@code when-authorized} by default, as for {@code env}).
 * <p>
 * It reads the one {@link LockOperatorView} bean, whatever the engine (Redis or the application's own), and backs off
 * without one. The forced release needs that bean to be a {@link LockForceReleaser} too: enabling it on an engine that
 * is not fails the start, naming the property, rather than leave operators with a {@code DELETE} that does not exist.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class)
@ConditionalOnClass(ConditionalOnAvailableEndpoint.class)
@ConditionalOnSingleCandidate(LockOperatorView.class)
@EnableConfigurationProperties({ LockProperties.class, LocksEndpointProperties.class })
@Import(DeprecatedLockProperties.Registrar.class)
public final class LocksEndpointAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LocksEndpointAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	@ImportRuntimeHints(LocksEndpointRuntimeHints.class)
	LocksEndpoint locksEndpoint(LockOperatorView operatorView, LockProperties properties,
			LocksEndpointProperties endpointProperties, ApplicationEventPublisher eventPublisher) {
		if (properties.getActuator().getForceRelease().isEnabled()) {
			if (!(operatorView instanceof LockForceReleaser forceReleaser)) {
				throw new IllegalStateException("distlock.actuator.force-release.enabled=true, but the lock engine ("
						+ operatorView.getClass().getName() + ") cannot force a release: it is not a "
						+ LockForceReleaser.class.getName() + ". Set distlock.actuator.force-release.enabled=false.");
			}
			return new ForceReleaseLocksEndpoint(operatorView, forceReleaser, eventPublisher,
					endpointProperties.getShowValues(), endpointProperties.getRoles());
		}
		return new LocksEndpoint(operatorView, endpointProperties.getShowValues(), endpointProperties.getRoles());
	}

}
