package dev.distlock.testing.autoconfigure;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedlockLockServiceAutoConfiguration;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * The in-memory engine for a test ({@link AutoConfigureInMemoryLocks}, which imports it with the starter's
 * {@code @DistributedLock} support): before the Redis engines, which back off for it, and before the interceptor's
 * auto-configuration, which needs a {@code LockService} bean. Not in the application's auto-configurations: only the
 * annotation brings it.
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = { RedlockLockServiceAutoConfiguration.class, RedisLockServiceAutoConfiguration.class,
		DistributedLockAutoConfiguration.class })
@Import(InMemoryLocksConfiguration.class)
public final class InMemoryLocksTestAutoConfiguration {

	/** Created by Spring Boot from {@link AutoConfigureInMemoryLocks}; tests do not create it. */
	public InMemoryLocksTestAutoConfiguration() {
	}

}
