package dev.distlock.autoconfigure;

import dev.distlock.preflight.LockPreflight;
import dev.distlock.preflight.LockPreflightRunner;
import dev.distlock.redis.RedisLockService;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Lazy;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configures the startup check that the application's Redis user may do everything the locks need
 * ({@link LockPreflightRunner}); {@code distlock.preflight.enabled=false} skips it.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = RedisLockServiceAutoConfiguration.class)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnSingleCandidate(RedisLockService.class)
@ConditionalOnBooleanProperty(name = "distlock.preflight.enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockProperties.class)
public final class LockPreflightAutoConfiguration {

	/** Created by Spring Boot from the auto-configuration imports; applications do not create it. */
	public LockPreflightAutoConfiguration() {
	}

	/** Not lazy even with lazy initialization on: a check nothing asks for must still run. */
	@Bean
	@Lazy(false)
	@ConditionalOnMissingBean
	@ConditionalOnSingleCandidate(RedisConnectionFactory.class)
	LockPreflightRunner lockPreflightRunner(RedisConnectionFactory connectionFactory, RedisLockService lockService,
			LockProperties properties, ObjectProvider<DataRedisConnectionDetails> connectionDetails) {
		DataRedisConnectionDetails details = connectionDetails.getIfUnique();
		String user = (details != null) ? details.getUsername() : null;
		LockPreflight preflight = new LockPreflight(connectionFactory, keyPrefix(lockService),
				properties.getPreflight().getTimeout(), server(details), user, lockService.replicaAcks());
		return new LockPreflightRunner(preflight, properties.getPreflight().getMode());
	}

	/** The service's own prefix, which a service the application built itself may have set apart from the property. */
	private static String keyPrefix(RedisLockService lockService) {
		String key = lockService.redisKey("k");
		return key.substring(0, key.length() - ":{k}".length());
	}

	private static String server(@Nullable DataRedisConnectionDetails details) {
		// sentinel, cluster and master/replica set-ups have no single address to name
		if (details != null && details.getSentinel() == null && details.getCluster() == null
				&& details.getMasterReplica() == null) {
			DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
			if (standalone != null) {
				return "Redis at " + standalone.getHost() + ":" + standalone.getPort();
			}
		}
		return "Redis";
	}

}
