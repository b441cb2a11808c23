package dev.distlock.redis;

import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The set-up of tests against one private redis-server (the class's own, from {@link RedisServerExtension}): flushed
 * before each test, with a {@link LockTestSupport} that closes after it every service and connection it opened.
 */
@ExtendWith(RedisServerExtension.class)
public abstract class OneServerFixture {

	/** The test class's redis-server. */
	protected RedisServer server;

	/** This test's services and connections, closed after it. */
	protected LockTestSupport support;

	/**
	 * Start each test on an empty server.
	 * @param redis the test class's server
	 */
	@BeforeEach
	protected void openSupport(RedisServer redis) {
		this.server = redis;
		redis.execute("FLUSHALL");
		this.support = LockTestSupport.forServer(redis);
	}

	/** Close what the test opened. */
	@AfterEach
	protected void closeSupport() {
		this.support.close();
	}

}
