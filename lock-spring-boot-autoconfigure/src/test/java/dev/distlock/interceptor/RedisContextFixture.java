package dev.distlock.interceptor;

import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The set-up of tests that start application contexts against one private redis-server (the class's own, from
 * {@link RedisServerExtension}), flushed before each test.
 */
@ExtendWith(RedisServerExtension.class)
public abstract class RedisContextFixture {

	/** The test class's redis-server. */
	protected RedisServer redis;

	/**
	 * Start each test on an empty server.
	 * @param server the test class's server
	 */
	@BeforeEach
	protected void flushRedis(RedisServer server) {
		this.redis = server;
		server.execute("FLUSHALL");
	}

}
