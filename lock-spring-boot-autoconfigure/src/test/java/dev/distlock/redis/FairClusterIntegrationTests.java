package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A fair lock on a Redis Cluster: the queue keys carry the lease's hash tag, so the scripts' four keys live in one
 * slot on the lease's master, and the hand-over message goes out on the key's shard.
 */
@ExtendWith(RedisTopologyExtension.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FairClusterIntegrationTests {

	private static RedisCluster cluster;

	private LockTestSupport support;

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@BeforeAll
	static void cluster(RedisCluster redis) {
		cluster = redis;
	}

	@BeforeEach
	void open() {
		this.support = LockTestSupport.forCluster(cluster, true);
	}

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		this.support.close();
	}

	@Test
	void theQueueLivesInTheLeasesSlotAndWaitersGetTheLockInOrder() throws Exception {
		// queue entries of 6 s, refreshed every 2 s: a waiter keeps its place through a loaded machine's stalls (with
		// the default 2 s, a stall of 1.4 s could drop it and change the order, issue 32)
		RedisLockService holder = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.fairEntryTtl(Duration.ofSeconds(6)));
		RedisLockService waiting = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.fairEntryTtl(Duration.ofSeconds(6)));
		String redisKey = holder.redisKey("fair-cluster");
		RedisServer master = cluster.masterFor(redisKey);
		assertThat(master.execute("CLUSTER", "KEYSLOT", redisKey + ":q"))
			.isEqualTo(master.execute("CLUSTER", "KEYSLOT", redisKey));
		Lease first = holder.tryAcquire(LockRequest.of("fair-cluster", Duration.ofSeconds(30), Duration.ZERO).fair())
			.orElseThrow();
		List<Integer> order = new CopyOnWriteArrayList<>();
		List<Future<?>> waiters = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			int number = i;
			RedisLockService service = (i % 2 == 0) ? waiting : holder;
			waiters.add(this.threads.submit(() -> {
				try (Lease lease = service
					.tryAcquire(LockRequest.of("fair-cluster", Duration.ofSeconds(30), Duration.ofSeconds(60)).fair())
					.orElseThrow()) {
					order.add(number);
				}
				return null;
			}));
			long expected = i + 1;
			// asked of the lease's master directly: the queue is there
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
				.until(() -> Long.valueOf(expected).equals(master.execute("ZCARD", redisKey + ":q")));
		}
		first.release();
		for (Future<?> waiter : waiters) {
			waiter.get(60, TimeUnit.SECONDS);
		}
		assertThat(order).containsExactly(0, 1, 2);
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
			.untilAsserted(() -> assertThat(LockTestSupport.leftKeys(master, "*fair-cluster*")).isEmpty());
	}

}
