package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import dev.distlock.core.RenewalStatus;
import dev.distlock.redis.internal.kind.ExclusiveKind;
import dev.distlock.redis.internal.single.LeaseEntry;
import dev.distlock.redis.internal.store.LeaseStore;
import dev.distlock.redis.internal.store.RedisFailures;
import dev.distlock.redis.internal.store.RenewalBatches;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.dao.DataAccessException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Renewal rounds against real servers: each batch is judged on its own, and cluster batches follow the connection. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseStoreRenewalIntegrationTests {

	private static final long TTL_MILLIS = 30_000;

	@ParameterizedTest(name = "native shortcut: {0}")
	@ValueSource(booleans = { true, false })
	void aFailingBatchFailsOnlyItsOwnLeases(boolean nativeScripts) {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			LeaseStore store = new LeaseStore(support.connectionFactory(), nativeScripts);
			List<LeaseEntry> entries = leases(server, RenewalBatches.BATCH_SIZE + 1, 2_000);
			// the first batch's script fails on a key of the wrong type; the second batch is a healthy lease
			server.execute("DEL", entries.get(0).redisKey);
			server.execute("SET", entries.get(0).redisKey, "not a lease");

			RenewalBatches.Renewals result = store.renewals().renewAll(entries, ttls(entries.size()), TimeUnit.SECONDS.toNanos(5));

			// translated by Spring on either path, the client's message kept as the cause's
			assertThat(IntStream.range(0, RenewalBatches.BATCH_SIZE)).allSatisfy(i -> assertThat(result.failures[i])
				.as("lease %d shares the failing batch", i).isInstanceOf(DataAccessException.class)
				.satisfies(failure -> assertThat(RedisFailures.describe(failure, entries.get(0).redisKey)).contains("WRONGTYPE")
					.doesNotContain("io.lettuce").doesNotContain("ExecutionException")));
			LeaseEntry healthy = entries.get(RenewalBatches.BATCH_SIZE);
			assertThat(result.failures[RenewalBatches.BATCH_SIZE]).isNull();
			assertThat(result.ours[RenewalBatches.BATCH_SIZE]).isTrue();
			assertThat((Long) server.execute("PTTL", healthy.redisKey)).isGreaterThan(TTL_MILLIS - 5_000);
		}
	}

	@Test
	void aWatchdogRoundWithAFailingBatchKeepsRenewingAndReportingTheHealthyLeases() {
		try (RedisServer server = RedisServer.start(); LockTestSupport support = LockTestSupport.forServer(server)) {
			// leases of 6 s renewed every 600 ms: the healthy ones outlive a loaded machine's stalls (3 s leases renewed
			// every second lost some to a stall of 2 s, issue 32)
			RedisLockService service = support.quicklyRenewingService();
			List<dev.distlock.core.Lease> leases = new ArrayList<>();
			for (int i = 0; i < RenewalBatches.BATCH_SIZE + 20; i++) {
				leases.add(service.acquire("many-" + i, LockTestSupport.RENEWED_TTL, Duration.ZERO));
			}
			// one lease's key turned into a string: the batch it is renewed in fails, every other lease stays ours
			String broken = service.redisKey("many-0");
			server.execute("DEL", broken);
			server.execute("SET", broken, "not a lease");
			await().atMost(LockTestSupport.RENEWAL_DEADLINE).until(() -> service.renewalStatus().failingLeases() > 0);
			RenewalStatus status = service.renewalStatus();
			assertThat(status.failingLeases()).isLessThanOrEqualTo(RenewalBatches.BATCH_SIZE);
			assertThat(status.lastError()).contains("WRONGTYPE");
			// the failing batch's leases are lost once their lease time passes unrenewed; those of the healthy batch
			// are renewed throughout and stay in Redis with their tokens
			await().atMost(LockTestSupport.RENEWED_TTL.plus(LockTestSupport.RENEWAL_DEADLINE))
				.until(() -> service.renewalStatus().failingLeases() == 0);
			List<dev.distlock.core.Lease> kept = leases.stream().filter(lease -> !lease.isLost()).toList();
			assertThat(kept).hasSizeGreaterThanOrEqualTo(20);
			for (dev.distlock.core.Lease lease : kept) {
				String redisKey = service.redisKey(lease.key());
				assertThat(server.execute("HGET", redisKey, "~t")).isEqualTo(Long.toString(lease.fencingToken()));
				assertThat((Long) server.execute("PTTL", redisKey)).isGreaterThan(0L);
			}
			assertThat(leases).filteredOn(dev.distlock.core.Lease::isLost).hasSizeLessThanOrEqualTo(RenewalBatches.BATCH_SIZE);
			server.execute("DEL", broken);
		}
	}

	@Test
	void renewalsOnAClusterConnectionGoOneSlotABatchEvenBehindAWrappedFactory() {
		try (RedisServer server = RedisServer.builder().config("cluster-enabled", "yes")
			.config("cluster-config-file", "nodes.conf").start()) {
			String[] addSlots = new String[16386];
			addSlots[0] = "CLUSTER";
			addSlots[1] = "ADDSLOTS";
			for (int slot = 0; slot < 16384; slot++) {
				addSlots[slot + 2] = Integer.toString(slot);
			}
			server.execute(addSlots);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> String.valueOf(server.execute("CLUSTER", "INFO")).contains("cluster_state:ok"));
			LettuceConnectionFactory cluster = new LettuceConnectionFactory(
					new RedisClusterConfiguration(List.of(server.host() + ":" + server.port())),
					LettuceClientConfiguration.builder().commandTimeout(LockTestSupport.COMMAND_TIMEOUT).build());
			cluster.afterPropertiesSet();
			cluster.start();
			try {
				// an application's wrapper: neither Lettuce's type nor its cluster flag is visible
				LeaseStore store = new LeaseStore(LockTestSupport.wrapped(cluster));
				List<LeaseEntry> entries = leases(server, 3, 0);
				assertThat(entries.stream().map(entry -> ClusterSlotHashUtil.calculateSlot(entry.redisKey)).distinct())
					.hasSize(3);
				RenewalBatches.Renewals result = store.renewals().renewAll(entries, ttls(3), TimeUnit.SECONDS.toNanos(5));
				assertThat(result.failures).containsOnlyNulls();
				assertThat(result.ours).containsOnly(true);
			}
			finally {
				cluster.destroy();
			}
		}
	}

	/** Leases written straight into Redis, as the acquire script writes them, and the entries that know them. */
	private static List<LeaseEntry> leases(RedisServer server, int count, long pttlMillis) {
		List<LeaseEntry> entries = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String key = "renewed-" + i;
			String redisKey = "lock:{" + key + "}";
			String owner = "client:1:" + i;
			long token = 1_000 + i;
			server.execute("HSET", redisKey, owner, "1", "~t", Long.toString(token));
			server.execute("PEXPIRE", redisKey, Long.toString((pttlMillis > 0) ? pttlMillis : TTL_MILLIS));
			entries.add(new LeaseEntry(key, redisKey, redisKey + ":released", owner, key, token, TTL_MILLIS, true,
					System.nanoTime(), 0, ExclusiveKind.INSTANCE));
		}
		return entries;
	}

	private static long[] ttls(int count) {
		long[] ttls = new long[count];
		java.util.Arrays.fill(ttls, TTL_MILLIS);
		return ttls;
	}

}
