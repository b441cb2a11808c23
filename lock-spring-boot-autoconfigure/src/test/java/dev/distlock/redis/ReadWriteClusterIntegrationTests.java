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
			RedisLockService readers = support.quicklyRenewingService();
			RedisLockService writers = support.quicklyRenewingService();
			ReadWriteLockIntegrationTests.warmUp(readers, writers);
			// renewed every 600 ms, the holds outlive stalls of 5 s (1 s leases did not, issue 32)
			Duration ttl = LockTestSupport.RENEWED_TTL;
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
			List<Long> firstDeadlines = new ArrayList<>();
			for (Lease read : reads) {
				firstDeadlines.add(deadline(readers, read));
			}
			// every hold renewed on its master: its deadline there moved past the one its acquisition set
			for (Lease read : reads) {
				LockTestSupport.awaitRenewal(readers, read);
			}
			for (int i = 0; i < reads.size(); i++) {
				assertThat(deadline(readers, reads.get(i))).isGreaterThan(firstDeadlines.get(i));
			}
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

	/** The deadline of {@code lease}'s hold on its master: the server's clock in ms ({@code ~e:<owner>}). */
	private static long deadline(RedisLockService service, Lease lease) {
		String redisKey = service.redisKey(lease.key());
		return Long.parseLong(String.valueOf(cluster.masterFor(redisKey).execute("HGET", redisKey, "~e:" + lease.owner())));
	}

}
