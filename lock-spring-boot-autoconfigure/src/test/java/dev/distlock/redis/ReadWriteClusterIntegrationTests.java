package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Read-write locks on a Redis Cluster (3 masters, 3 replicas, Lettuce): every field of a lock lives in its one hash
 * on the master of the key's hash tag, the renewals of read and write holds are batched per slot, a writer waiting for
 * readers hears their release on the key's shard, and nothing is left on any master once free.
 */
@ExtendWith(RedisTopologyExtension.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ReadWriteClusterIntegrationTests {

	private static RedisCluster cluster;

	@BeforeAll
	static void cluster(RedisCluster redis) {
		cluster = redis;
	}

	@Test
	void readersAndWritersOnEveryMasterAreRenewedAndLeaveNothing() throws Exception {
		ExecutorService threads = Executors.newCachedThreadPool();
		try (LockTestSupport support = LockTestSupport.forCluster(cluster, true)) {
			RedisLockService readers = support.service();
			RedisLockService writers = support.service();
			ReadWriteLockIntegrationTests.warmUp(readers, writers);
			Duration ttl = Duration.ofSeconds(1);
			Set<RedisServer> masters = new HashSet<>();
			List<Lease> reads = new ArrayList<>();
			List<Future<Lease>> waitingWriters = new ArrayList<>();
			List<String> keys = new ArrayList<>();
			for (int i = 0; masters.size() < cluster.masters().size() && i < 100; i++) {
				String key = "rw-" + i;
				RedisServer master = cluster.masterFor(readers.redisKey(key));
				if (!masters.add(master)) {
					continue;
				}
				keys.add(key);
				reads.add(readers.tryAcquire(LockRequest.of(key, ttl, Duration.ZERO).read()).orElseThrow());
				reads.add(readers.tryAcquire(LockRequest.of(key, ttl, Duration.ZERO).read()).orElseThrow());
				waitingWriters.add(threads.submit(() -> writers.tryAcquire(LockRequest.of(key, ttl, Duration.ofSeconds(60))
					.write()).orElseThrow()));
			}
			assertThat(masters).hasSize(cluster.masters().size());
			long start = System.nanoTime();
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
				.until(() -> System.nanoTime() - start > 3 * ttl.toNanos());
			assertThat(reads).allSatisfy(lease -> assertThat(lease.isOwned()).isTrue());
			assertThat(waitingWriters).noneMatch(Future::isDone);
			for (String key : keys) {
				String redisKey = readers.redisKey(key);
				assertThat(cluster.masterFor(redisKey).execute("HGET", redisKey, "~m")).isEqualTo("r");
			}
			reads.forEach(Lease::release);
			List<Lease> written = new ArrayList<>();
			for (Future<Lease> writer : waitingWriters) {
				written.add(writer.get(30, TimeUnit.SECONDS));
			}
			for (int i = 0; i < keys.size(); i++) {
				String redisKey = readers.redisKey(keys.get(i));
				assertThat(cluster.masterFor(redisKey).execute("HGET", redisKey, "~x")).isEqualTo(written.get(i).owner());
			}
			written.forEach(Lease::release);
			for (String key : keys) {
				String redisKey = readers.redisKey(key);
				assertThat(cluster.masterFor(redisKey).execute("EXISTS", redisKey)).as(redisKey).isEqualTo(0L);
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

}
