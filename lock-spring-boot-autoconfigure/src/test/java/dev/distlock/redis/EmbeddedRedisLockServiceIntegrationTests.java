package dev.distlock.redis;

import dev.distlock.test.redis.EmbeddedRedis;
import dev.distlock.test.redis.RedisBinary;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lock contract against the Redis 6.2 binary shipped in the embedded-redis jar, whatever is on PATH: proves the
 * fallback users without a Redis installation get, and that the scripts run on Redis 6.2.
 */
@ExtendWith(RedisServerExtension.class)
@EmbeddedRedis
class EmbeddedRedisLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forServer(server);
	}

	@Test
	void runsOnTheEmbeddedBinary() {
		assertThat(server.binary().source()).isEqualTo(RedisBinary.Source.EMBEDDED);
		assertThat(server.version()).startsWith("6.2.");
	}

}
