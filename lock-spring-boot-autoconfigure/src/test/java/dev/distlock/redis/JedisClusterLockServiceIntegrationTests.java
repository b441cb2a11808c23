package dev.distlock.redis;

import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The lock contract on a Redis Cluster of 3 masters and 3 replicas through Jedis's cluster client: scripts routed by
 * slot through the template, renewals one batch per slot, and releases on the key's shard (SPUBLISH in the scripts,
 * SSUBSCRIBE on the key's master by one reader per master, as Lettuce's services do).
 */
@ExtendWith(RedisTopologyExtension.class)
class JedisClusterLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisCluster cluster;

	@BeforeAll
	static void cluster(RedisCluster redis) {
		cluster = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.jedisForCluster(cluster);
	}

}
