package dev.distlock.testing.autoconfigure;

import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.autoconfigure.LockProperties;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.InMemoryLockServiceBuilder;
import dev.distlock.testing.InMemoryLockStore;
import dev.distlock.testing.LockClock;
import dev.distlock.testing.LockScenarios;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The in-memory engine's beans, for the test's auto-configuration and the local run's alike: a store, one engine on it
 * as the application's {@link LockService} (so the Redis engine's {@code @ConditionalOnMissingBean(LockService.class)}
 * backs off), the scenarios over the store, and the {@code locks} health indicator that names the engine. Nothing when
 * the application has a {@code LockService} of its own.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean(LockService.class)
@EnableConfigurationProperties({ InMemoryLockProperties.class, LockProperties.class })
class InMemoryLocksConfiguration {

	/** The detail of the {@code locks} health that names the engine. */
	static final String ENGINE = "in-memory (single instance only)";

	@Bean
	InMemoryLockStore inMemoryLockStore(InMemoryLockProperties properties) {
		return new InMemoryLockStore(properties.isManualClock() ? LockClock.manual() : LockClock.system());
	}

	/** Named as the Redis engine's bean, whose place it takes; its renewal ratio is the starter's property. */
	@Bean
	InMemoryLockService lockService(InMemoryLockStore store, LockProperties properties,
			ApplicationEventPublisher eventPublisher, ObjectProvider<LockListener> listeners, Environment environment) {
		InMemoryLockServiceBuilder builder = InMemoryLockService.builder(store)
			.renewalRatio(properties.getRenewalRatio())
			.holderApplication(properties.getHolder().applicationOrDefault(environment))
			.holderInstance(properties.getHolder().instanceOrDefault())
			.eventPublisher(eventPublisher);
		listeners.orderedStream().forEach(builder::listener);
		return builder.build();
	}

	@Bean
	LockScenarios lockScenarios(InMemoryLockStore store) {
		return LockScenarios.of(store);
	}

	/**
	 * The starter's {@code locks} health indicator with the engine's name among its details; the starter's own backs
	 * off for it (same bean name), as this configuration comes before it.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
	static class HealthConfiguration {

		@Bean
		@ConditionalOnEnabledHealthIndicator("locks")
		@ConditionalOnMissingBean(name = "locksHealthIndicator")
		LocksHealthIndicator locksHealthIndicator(LockOperatorView operatorView, LockProperties properties) {
			return new InMemoryLocksHealthIndicator(operatorView,
					LocksHealthIndicator.status(properties.getHealth().getRenewalFailureStatus()));
		}

	}

}
