package dev.distlock.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockPage;
import dev.distlock.core.LockRequest;
import dev.distlock.core.StoredLock;
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
 * Every lock of a Redis Cluster (3 masters, 3 replicas), whichever master holds it, listed page by page through
 * Lettuce and through Jedis ({@code LockDirectory}, issue 29): each page's scan runs on one master, and the cursor
 * goes on to the next master once one is done.
 */
@ExtendWith(RedisTopologyExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClusterLockDirectoryIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(60);

	private static RedisCluster cluster;

	@BeforeAll
	static void cluster(RedisCluster redis) {
		cluster = redis;
	}

	@Test
	void lettuceListsTheLocksOfEveryMaster() {
		try (LockTestSupport support = LockTestSupport.forCluster(cluster, true)) {
			listsTheLocksOfEveryMaster(support);
		}
	}

	@Test
	void jedisListsTheLocksOfEveryMaster() {
		try (LockTestSupport support = LockTestSupport.jedisForCluster(cluster)) {
			listsTheLocksOfEveryMaster(support);
		}
	}

	@Test
	void everyKindNamesItsHolderByLabelOnTheCluster() throws Exception {
		try (LockTestSupport support = LockTestSupport.forCluster(cluster, true)) {
			String prefix = "label-" + UUID.randomUUID().toString().substring(0, 8);
			RedisLockService first = support.service(RedisLockService.builder(support.connectionFactory())
				.keyPrefix(prefix)
				.holderApplication("shop")
				.holderInstance("pod-1"));
			RedisLockService second = support.service(RedisLockService.builder(support.connectionFactory())
				.keyPrefix(prefix)
				.holderApplication("shop")
				.holderInstance("pod-2"));
			RedisLockService operator = support
				.service(RedisLockService.builder(support.connectionFactory()).keyPrefix(prefix));
			Lease exclusive = first.acquire("cart", TTL, Duration.ZERO);
			Lease reader = first.tryAcquire(LockRequest.of("stock", TTL, Duration.ZERO).read()).orElseThrow();
			Lease otherReader = second.tryAcquire(LockRequest.of("stock", TTL, Duration.ZERO).read()).orElseThrow();
			Lease writer = second.tryAcquire(LockRequest.of("prices", TTL, Duration.ZERO).write()).orElseThrow();
			Lease fair = first.tryAcquire(LockRequest.of("refunds", TTL, Duration.ZERO).fair()).orElseThrow();
			CompletableFuture<Optional<Lease>> queued = second
				.tryAcquireAsync(LockRequest.of("refunds", TTL, Duration.ofSeconds(30)).fair(), LockOwner.newOwner());
			try {
				assertThat(operator.holder("cart").map(LockHolder::holder)).hasValue(exclusive.holder().toString());
				assertThat(operator.holder("stock").map(LockHolder::holder))
					.hasValue(reader.holder() + "; " + otherReader.holder());
				assertThat(operator.holder("prices").map(LockHolder::holder)).hasValue(writer.holder().toString());
				Map<String, StoredLock> listed = LockDirectoryIntegrationTests.byKey(operator);
				assertThat(listed.get("cart").holder()).isEqualTo(exclusive.holder().toString());
				assertThat(listed.get("stock").holder()).isEqualTo(reader.holder() + "; " + otherReader.holder());
				assertThat(listed.get("prices").holder()).isEqualTo(writer.holder().toString());
				await().atMost(Duration.ofSeconds(20))
					.until(() -> operator.locks(null, 100)
						.locks()
						.stream()
						.anyMatch(lock -> lock.key().equals("refunds") && lock.queueLength() == 1));
				fair.release();
				Lease handed = queued.get(30, TimeUnit.SECONDS).orElseThrow();
				assertThat(handed.holder().toString()).startsWith("shop@pod-2 ");
				assertThat(operator.holder("refunds").map(LockHolder::holder)).hasValue(handed.holder().toString());
				handed.release();
			}
			finally {
				for (Lease lease : List.of(exclusive, reader, otherReader, writer)) {
					lease.release();
				}
			}
		}
	}

	private void listsTheLocksOfEveryMaster(LockTestSupport support) {
		// a prefix of this test's own: the cluster is shared with other test classes
		String prefix = "dir-" + UUID.randomUUID().toString().substring(0, 8);
		RedisLockService holder = support.service(RedisLockService.builder(support.connectionFactory()).keyPrefix(prefix));
		RedisLockService operator = support
			.service(RedisLockService.builder(support.connectionFactory()).keyPrefix(prefix));
		Map<String, Lease> leases = new HashMap<>();
		Set<RedisServer> masters = new HashSet<>();
		for (int i = 0; i < 60; i++) {
			String key = "job-" + i;
			leases.put(key, holder.acquire(key, TTL, Duration.ZERO));
			masters.add(cluster.masterFor(holder.redisKey(key)));
		}
		assertThat(masters).as("the keys are spread over every master").hasSize(cluster.masters().size());
		try {
			List<LockPage> pages = LockDirectoryIntegrationTests.pages(operator, 7);

			List<StoredLock> listed = pages.stream().flatMap(page -> page.locks().stream()).toList();
			assertThat(listed.stream().map(StoredLock::key).collect(Collectors.toSet())).isEqualTo(leases.keySet());
			assertThat(pages).hasSizeGreaterThanOrEqualTo(60 / 7);
			assertThat(pages).allSatisfy(page -> assertThat(page.locks()).hasSizeLessThanOrEqualTo(2 * 7));
			assertThat(listed).allSatisfy(lock -> {
				assertThat(lock.fencingToken()).isEqualTo(leases.get(lock.key()).fencingToken());
				assertThat(lock.holds()).isEqualTo(1);
				assertThat(lock.nodes()).isEqualTo(1);
			});
		}
		finally {
			leases.values().forEach(Lease::release);
		}
		assertThat(LockDirectoryIntegrationTests.byKey(operator)).isEmpty();
	}

}
