package dev.distlock.redis;

import dev.distlock.test.redis.RedisSentinelSet;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock contract behind Sentinel through Jedis's sentinel-aware pool: the same master, replica and three
 * sentinels as {@link SentinelLockServiceIntegrationTests}, on Spring Data Redis's other client.
 */
@ExtendWith(RedisTopologyExtension.class)
class JedisSentinelLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisSentinelSet sentinels;

	@BeforeAll
	static void sentinels(RedisSentinelSet redis) {
		sentinels = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.jedisForSentinels(sentinels);
	}

}
