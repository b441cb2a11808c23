package dev.distlock.redis;

import dev.distlock.test.redis.RedisSentinelSet;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock contract behind Sentinel (a master, a replica, three sentinels) through Lettuce's sentinel-aware client:
 * the client asks the sentinels for the master and sends everything there, pub/sub included.
 */
@ExtendWith(RedisTopologyExtension.class)
class SentinelLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisSentinelSet sentinels;

	@BeforeAll
	static void sentinels(RedisSentinelSet redis) {
		sentinels = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forSentinels(sentinels);
	}

}
