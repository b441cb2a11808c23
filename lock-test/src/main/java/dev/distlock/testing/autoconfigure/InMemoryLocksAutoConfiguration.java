package dev.distlock.testing.autoconfigure;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedlockLockServiceAutoConfiguration;
import dev.distlock.testing.InMemoryLockStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Runs an application's locks on the in-memory engine when {@code distlock.in-memory.enabled=true} and
 * {@code lock-test} is on the class path: for a local run of one instance without Redis (Spring Boot's
 * {@code spring-boot:test-run}, say). Loudly: one WARN at startup says that these locks exclude only within this JVM,
 * and the {@code locks} health shows {@code engine: in-memory (single instance only)}. Ordered before the Redis
 * engines, which back off for it.
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = { RedlockLockServiceAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
		DistributedLockAutoConfiguration.class })
@ConditionalOnBooleanProperty(InMemoryLockProperties.PREFIX + ".enabled")
@ConditionalOnBooleanProperty(name = "distlock.enabled", matchIfMissing = true)
@Import(InMemoryLocksConfiguration.class)
public final class InMemoryLocksAutoConfiguration {

	/** The WARN logged at startup. */
	static final String WARNING = "Locks run on the in-memory engine of dev.distlock:lock-test "
			+ "(distlock.in-memory.enabled=true): they exclude only within this JVM, NOT other instances of the "
			+ "application, which never see them. Use it for tests and local runs of a single instance; remove the "
			+ "property (or set it to false) to lock on Redis.";

	private static final Log logger = LogFactory.getLog(InMemoryLocksAutoConfiguration.class);

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public InMemoryLocksAutoConfiguration() {
	}

	/** Once the context's singletons exist; only when the engine is this one, not a {@code LockService} of the application's. */
	@Bean
	@ConditionalOnBean(InMemoryLockStore.class)
	SmartInitializingSingleton inMemoryLocksWarning() {
		return () -> logger.warn(WARNING);
	}

}
