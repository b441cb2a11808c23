package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.preflight.LockPreflight;
import dev.distlock.preflight.PreflightReport;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The lock contract on a Redis Cluster of 3 masters and 3 replicas through Lettuce's cluster client with adaptive
 * topology refresh: each lock's key and release channel live on the master of the key's hash tag, the scripts are
 * routed by slot, the watchdog renews in one batch per slot, and releases are announced on the key's shard (SPUBLISH),
 * where its waiters subscribe (SSUBSCRIBE on the key's master).
 */
@ExtendWith(RedisTopologyExtension.class)
class ClusterLockServiceIntegrationTests extends LockServiceContractTests {

	private static RedisCluster cluster;

	@BeforeAll
	static void cluster(RedisCluster redis) {
		cluster = redis;
	}

	@Override
	protected LockTestSupport createSupport() {
		return LockTestSupport.forCluster(cluster, true);
	}

	@Test
	void lockKeysSpreadOverEveryMaster() {
		RedisLockService service = this.support.service();
		Set<RedisServer> masters = new HashSet<>();
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			Lease lease = service.acquire("spread-" + i, Duration.ofSeconds(30), Duration.ZERO);
			leases.add(lease);
			String redisKey = service.redisKey("spread-" + i);
			RedisServer master = cluster.masterFor(redisKey);
			// the lease is where the cluster says the key lives, not only somewhere Lettuce can reach
			assertThat(master.execute("HGET", redisKey, lease.owner())).as(redisKey).isEqualTo("1");
			masters.add(master);
		}
		assertThat(masters).containsExactlyInAnyOrderElementsOf(cluster.masters());
		leases.forEach(Lease::release);
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
	}

	/**
	 * The preflight on a Cluster: its script's SPUBLISH must name a channel in its key's slot, which the key's own name
	 * is ({@code lock:__preflight__} for both); and a lock named {@code __preflight__} is not its key.
	 */
	@Test
	void thePreflightPassesOnTheClusterAndLeavesALockOfItsNameAlone() {
		RedisLockService service = this.support.service();
		Lease lease = service.acquire("__preflight__", Duration.ofSeconds(30), Duration.ZERO);
		PreflightReport report = new LockPreflight(this.support.connectionFactory(), "lock", Duration.ofSeconds(30),
				"Redis", null).check();
		assertThat(report.findings()).isEmpty();
		assertThat(report.outcome()).isEqualTo(PreflightReport.Outcome.PASSED);
		assertThat(cluster.masterFor("lock:__preflight__").execute("EXISTS", "lock:__preflight__")).isEqualTo(0L);
		assertThat(lease.isOwned()).isTrue();
		lease.release();
	}

	/**
	 * Sharded pub/sub: a waiter's subscription lives on the master of its key's slot (SSUBSCRIBE there), where the
	 * release script announces the release (SPUBLISH), so the message never crosses the cluster bus. With keys on all
	 * three masters, each waiter is subscribed on its key's master, on no other node, and gets its lock.
	 */
	@Test
	void waitersSubscribeOnTheirKeysShardAndGetTheLock() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support.service();
		Map<RedisServer, String> namePerMaster = new LinkedHashMap<>();
		for (int i = 0; namePerMaster.size() < 3; i++) {
			namePerMaster.putIfAbsent(cluster.masterFor(holder.redisKey("sub-" + i)), "sub-" + i);
		}
		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			for (Map.Entry<RedisServer, String> entry : namePerMaster.entrySet()) {
				String name = entry.getValue();
				Lease held = holder.acquire(name, Duration.ofSeconds(30), Duration.ZERO);
				Future<Lease> waiting = thread.submit(() -> waiter.acquire(name, Duration.ofSeconds(30), Duration.ofSeconds(20)));
				await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
				String channel = holder.redisKey(name) + ":released";
				await().atMost(Duration.ofSeconds(10)).until(() -> shardSubscribers(entry.getKey(), channel) == 1);
				for (RedisServer node : cluster.nodes()) {
					if (!node.equals(entry.getKey())) {
						assertThat(shardSubscribers(node, channel)).as("shard subscribers on " + node).isZero();
					}
					List<?> classic = (List<?>) node.execute("PUBSUB", "NUMSUB", channel);
					assertThat(classic.get(1)).as("classic subscribers on " + node).isEqualTo(0L);
				}
				held.release();
				Lease acquired = waiting.get(20, TimeUnit.SECONDS);
				assertThat(acquired.fencingToken()).isGreaterThan(held.fencingToken());
				acquired.release();
			}
		}
		finally {
			thread.shutdownNow();
		}
	}

	private static long shardSubscribers(RedisServer node, String channel) {
		List<?> numsub = (List<?>) node.execute("PUBSUB", "SHARDNUMSUB", channel);
		return (Long) numsub.get(1);
	}

	/**
	 * The watchdog sends one batch per hash slot: with leases on 60 keys (about 60 slots over the 3 masters), every one
	 * is renewed, over and over, none is lost, and none outlives its release.
	 */
	@Test
	void leasesOnManySlotsAreAllRenewed() {
		// renewed every 600 ms, the leases outlive stalls of 5 s (1.5 s leases renewed every 500 ms did not, issue 32)
		Duration ttl = LockTestSupport.RENEWED_TTL;
		List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
		AtomicInteger renewals = new AtomicInteger();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS)
			.listener(new LockListener() {
				@Override
				public void renewed(String name, boolean success) {
					if (success) {
						renewals.incrementAndGet();
					}
				}

				@Override
				public void lost(LockLostEvent event) {
					lost.add(event);
				}
			}));
		List<Lease> leases = new ArrayList<>();
		List<Long> firstExpiries = new ArrayList<>();
		Set<Integer> slots = new HashSet<>();
		for (int i = 0; i < 60; i++) {
			leases.add(service.acquire("slot-" + i, ttl, Duration.ZERO));
			String redisKey = service.redisKey("slot-" + i);
			slots.add(RedisCluster.slotOf(redisKey));
			firstExpiries.add((Long) cluster.masterFor(redisKey).execute("PEXPIRETIME", redisKey));
		}
		assertThat(slots).hasSizeGreaterThan(50);
		// four renewal rounds' worth, whenever they come
		await().atMost(LockTestSupport.RENEWAL_DEADLINE.multipliedBy(2)).until(() -> renewals.get() >= leases.size() * 4);
		for (int i = 0; i < leases.size(); i++) {
			String redisKey = service.redisKey("slot-" + i);
			// each renewed in Redis: it expires later than its acquisition had it, so it outlives that ttl
			Object expiry = cluster.masterFor(redisKey).execute("PEXPIRETIME", redisKey);
			assertThat((Long) expiry).as("expiry of %s (ms), first %s", redisKey, firstExpiries.get(i))
				.isGreaterThan(firstExpiries.get(i));
			assertThat(leases.get(i).isHeld()).isTrue();
		}
		assertThat(lost).isEmpty();
		assertThat(service.activeLeases()).hasSize(leases.size())
			.allSatisfy(snapshot -> assertThat(snapshot.lastRenewal()).isNotNull());
		leases.forEach(Lease::release);
		assertThat(LockTestSupport.withoutReceipts(this.redis.keys("lock:*"))).isEmpty();
		assertThat(this.redis.getExpire(service.redisKey("slot-0"), TimeUnit.MILLISECONDS)).isEqualTo(-2L);
	}

	/**
	 * Replica acknowledgement on a cluster: the acquire script and its WAIT go to the connection of the key's master, so
	 * the replica that acknowledges is that shard's. With keys on every master, each new lease is on its master's
	 * replica when the acquisition returns; with the replica of one key's master paused, that key's acquisition fails
	 * saying so and leaves nothing behind, while a key on another shard is still acquired.
	 */
	@Test
	void replicaAcknowledgementsComeFromTheReplicaOfTheKeysMaster() {
		// a healthy replica on a loaded machine acknowledges within 1 s (300 ms could fail an acquisition, issue 32);
		// the client's command timeout (2 s) must outlast the script and its WAIT for the refusal to say why
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.replicaAcks(1, Duration.ofSeconds(1)));
		Map<RedisServer, String> namePerMaster = new LinkedHashMap<>();
		for (int i = 0; namePerMaster.size() < 3; i++) {
			namePerMaster.putIfAbsent(cluster.masterFor(service.redisKey("acked-" + i)), "acked-" + i);
		}
		for (Map.Entry<RedisServer, String> entry : namePerMaster.entrySet()) {
			String redisKey = service.redisKey(entry.getValue());
			RedisServer replica = cluster.replicaOf(entry.getKey()).orElseThrow();
			try (Lease lease = service.acquire(entry.getValue(), Duration.ofSeconds(30), Duration.ZERO)) {
				// KEYS is answered by the node itself, without a redirect to the master
				assertThat(replica.execute("KEYS", redisKey)).as("on the replica of " + entry.getKey())
					.isEqualTo(List.of(redisKey));
			}
		}
		List<String> names = new ArrayList<>(namePerMaster.values());
		RedisServer pausedMaster = cluster.masterFor(service.redisKey(names.get(0)));
		RedisServer paused = cluster.replicaOf(pausedMaster).orElseThrow();
		paused.pause();
		try {
			assertThatThrownBy(() -> service.acquire(names.get(0), Duration.ofSeconds(30), Duration.ZERO))
				.isInstanceOf(LockUnavailableException.class)
				.hasMessageContaining("only 0 of 1 replica(s) acknowledged the new lease of '" + names.get(0) + "'")
				.hasMessageContaining("it was deleted again");
			assertThat(pausedMaster.execute("EXISTS", service.redisKey(names.get(0)))).isEqualTo(0L);
			try (Lease other = service.acquire(names.get(1), Duration.ofSeconds(30), Duration.ZERO)) {
				assertThat(other.isHeld()).isTrue();
			}
		}
		finally {
			paused.resume();
		}
	}

}
