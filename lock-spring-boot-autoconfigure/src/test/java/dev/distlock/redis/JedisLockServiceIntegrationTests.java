package dev.distlock.redis;

import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock contract on Jedis, Spring Data Redis's other client: scripts and renewals go through the template, and the
 * pub/sub connection's subscribing thread blocks for the life of the subscription.
 */
@ExtendWith(RedisServerExtension.class)
class JedisLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.jedis(server);
	}

}
