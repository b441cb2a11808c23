package dev.distlock.testing.tck;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.core.LockService;
import dev.distlock.redis.RedisLockService;
import dev.distlock.redis.RedisLockServiceBuilder;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The engine contract against the Redis engine on a real {@code redis-server} (the one on PATH, else the embedded
 * one): each instance is a {@link RedisLockService} on a connection factory of its own, as an application instance
 * has. Renewals every tenth of the lease time, so that a renewed lease of {@link #shortTtl()} outlives the stalls of a
 * loaded machine.
 */
@ExtendWith(RedisServerExtension.class)
class RedisLockServiceTckTests extends LockServiceTck {

	private static RedisServer server;

	private final Map<LockService, LettuceConnectionFactory> factories = new ConcurrentHashMap<>();

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@Override
	protected LockService newInstance(Options options) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		factory.afterPropertiesSet();
		factory.start();
		RedisLockServiceBuilder builder = RedisLockService.builder(factory)
			.renewalRatio(0.1)
			.eventPublisher(options.eventPublisher());
		options.listeners().forEach(builder::listener);
		RedisLockService service = builder.build();
		this.factories.put(service, factory);
		return service;
	}

	@Override
	protected void closeInstance(LockService instance) {
		super.closeInstance(instance);
		LettuceConnectionFactory factory = this.factories.remove(instance);
		if (factory != null) {
			factory.destroy();
		}
	}

	/** The service closes, but its connections stay: its lease stays in Redis until its time runs out. */
	@Override
	protected void crash(LockService instance) {
		((RedisLockService) instance).close();
	}

	@Override
	protected Duration shortTtl() {
		return Duration.ofSeconds(3);
	}

}
