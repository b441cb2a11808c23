package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.test.redis.EmbeddedRedis;
import dev.distlock.test.redis.RedisBinary;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lock contract on a Redis Cluster of the embedded Redis 6.2 binary, which knows no sharded pub/sub: the waiters'
 * SSUBSCRIBE is an unknown command there, so they subscribe classically on their key's master instead, and the scripts'
 * SPUBLISH falls back to PUBLISH, which reaches that master's subscribers without crossing the cluster bus.
 */
@ExtendWith(RedisTopologyExtension.class)
class EmbeddedClusterLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisCluster cluster;

	@BeforeAll
	static void cluster(@EmbeddedRedis RedisCluster redis) {
		cluster = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forCluster(cluster, true);
	}

	@Test
	void waitersSubscribeClassicallyOnTheirKeysMasterOnRedis62() throws Exception {
		RedisServer anyNode = cluster.nodes().get(0);
		assertThat(anyNode.binary().source()).isEqualTo(RedisBinary.Source.EMBEDDED);
		assertThat(anyNode.version()).startsWith("6.2.");
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support.service();
		Lease held = holder.acquire("classic", Duration.ofSeconds(30), Duration.ZERO);
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			Future<Lease> waiting = thread.submit(() -> waiter.acquire("classic", Duration.ofSeconds(30), Duration.ofSeconds(20)));
			String channel = holder.redisKey("classic") + ":released";
			RedisServer master = cluster.masterFor(holder.redisKey("classic"));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> List.of(channel, 1L).equals(master.execute("PUBSUB", "NUMSUB", channel)));
			held.release();
			Lease acquired = waiting.get(20, TimeUnit.SECONDS);
			assertThat(acquired.fencingToken()).isGreaterThan(held.fencingToken());
			acquired.release();
		}
		finally {
			thread.shutdownNow();
		}
	}

}
