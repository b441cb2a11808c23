package dev.distlock.redis;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.distlock.core.Lease;
import dev.distlock.core.LockPage;
import dev.distlock.core.StoredLock;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

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
