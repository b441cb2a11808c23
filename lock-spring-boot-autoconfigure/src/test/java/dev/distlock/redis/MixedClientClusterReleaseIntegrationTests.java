package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.test.redis.RedisCluster;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisTopologyExtension;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;


import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 26: on a Redis Cluster every client announces releases on the same wire (sharded pub/sub on the key's
 * master), so services on different clients that share a lock hear each other's releases: a waiter wakes within
 * milliseconds of the holder's release, not at the holder's lease time (30 s here). Jedis and Lettuce, and Lettuce
 * behind an application's wrapper of the factory (which shows neither Lettuce's type nor its cluster flag), in both
 * directions. And a waiter behind a wrapped factory subscribes rather than polls: its calls to Redis while it waits are
 * a handful, not one every 20-30 ms.
 */
@ExtendWith(RedisTopologyExtension.class)
class MixedClientClusterReleaseIntegrationTests {

	private static final Duration HOLDER_TTL = Duration.ofSeconds(30);

	/** Longer than the holder's lease: a waiter that hears no release still gets the lock, at the lease's end. */
	private static final Duration WAIT = Duration.ofSeconds(40);

	private static final int ROUNDS = 5;

	private static RedisCluster cluster;

	private LockTestSupport lettuce;

	private LockTestSupport jedis;

	private final ExecutorService waiting = Executors.newSingleThreadExecutor();

	@BeforeAll
	static void cluster(RedisCluster redis) {
		cluster = redis;
	}

	@BeforeEach
	void open() {
		this.lettuce = LockTestSupport.forCluster(cluster, true);
		this.jedis = LockTestSupport.jedisForCluster(cluster);
	}

	@AfterEach
	void close() {
		this.waiting.shutdownNow();
		this.lettuce.close();
		this.jedis.close();
	}

	@Test
	void jedisWaiterWakesOnLettuceRelease() throws Exception {
		assertWakesPromptly(this.lettuce.service(), this.jedis.service(), "lettuce-to-jedis");
	}

	@Test
	void lettuceWaiterWakesOnJedisRelease() throws Exception {
		assertWakesPromptly(this.jedis.service(), this.lettuce.service(), "jedis-to-lettuce");
	}

	@Test
	void wrappedWaiterWakesOnLettuceRelease() throws Exception {
		assertWakesPromptly(this.lettuce.service(), wrappedService(), "lettuce-to-wrapped");
	}

	@Test
	void lettuceWaiterWakesOnWrappedRelease() throws Exception {
		assertWakesPromptly(wrappedService(), this.lettuce.service(), "wrapped-to-lettuce");
	}

	/**
	 * While a wrapped factory's waiter waits (the holder's lease far from its end), it sends no attempts: it waits for
	 * the release message. Counted as the script calls the masters ran over a second (the holder's renewal may be one
	 * or two of them); a waiter that polls every 20-30 ms makes 35-50.
	 */
	@Test
	void wrappedWaiterCallsRedisAFewTimesWhileWaiting() throws Exception {
		RedisLockService holder = this.lettuce.service();
		RedisLockService waiter = wrappedService();
		String name = "wrapped-quiet";
		Lease held = holder.acquire(name, HOLDER_TTL, Duration.ZERO);
		Future<Lease> acquired = this.waiting.submit(() -> waiter.acquire(name, HOLDER_TTL, WAIT));
		awaitWaiterNoted(holder.redisKey(name), waiter);
		long before = scriptCallsOnMasters();
		long start = System.nanoTime();
		await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> true);
		long calls = scriptCallsOnMasters() - before;
		long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		assertThat(acquired).isNotDone();
		assertThat(calls).as("script calls on the masters over %d ms of waiting", elapsedMillis).isLessThanOrEqualTo(5);
		held.release();
		acquired.get(10, TimeUnit.SECONDS).release();
	}

	/**
	 * {@value #ROUNDS} times: {@code holder} holds the lock with a long lease, {@code waiter} waits for it (noted in the
	 * lease, so that the release publishes), the holder releases; the time from the release's return to the waiter's
	 * acquisition is measured. The median must be at most 50 ms, and every round far below the holder's lease time
	 * (waking at the lease's end is what a release nobody hears costs). And the waiter waited as a subscriber: its
	 * channel subscribed on the key's master, sharded (a waiter that polls would wake quickly too).
	 */
	private void assertWakesPromptly(RedisLockService holder, RedisLockService waiter, String name) throws Exception {
		List<Long> wakeMillis = new ArrayList<>();
		List<Boolean> shardSubscribed = new ArrayList<>();
		String redisKey = holder.redisKey(name);
		for (int round = 0; round < ROUNDS; round++) {
			Lease held = holder.acquire(name, HOLDER_TTL, Duration.ZERO);
			Future<Long> acquired = this.waiting.submit(() -> {
				Lease lease = waiter.acquire(name, HOLDER_TTL, WAIT);
				long at = System.nanoTime();
				lease.release();
				return at;
			});
			awaitWaiterNoted(redisKey, waiter);
			shardSubscribed.add(awaitShardSubscriber(redisKey));
			held.release();
			long released = System.nanoTime();
			long at = acquired.get(WAIT.toSeconds() + 10, TimeUnit.SECONDS);
			wakeMillis.add(TimeUnit.NANOSECONDS.toMillis(at - released));
			assertThat(wakeMillis.get(round)).as("ms from release to acquisition in %s", wakeMillis)
				.isLessThan(HOLDER_TTL.toMillis() / 10);
		}
		List<Long> sorted = wakeMillis.stream().sorted().toList();
		assertThat(sorted.get(sorted.size() / 2)).as("median ms from release to acquisition in %s", wakeMillis)
			.isLessThanOrEqualTo(50);
		assertThat(shardSubscribed).as("waiter subscribed on the key's master (SSUBSCRIBE), per round").containsOnly(true);
	}

	/** Until the waiter waits: its thread registered and its note in the lease (so that the release publishes). */
	private static void awaitWaiterNoted(String redisKey, RedisLockService waiter) {
		RedisServer master = cluster.masterFor(redisKey);
		await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> ((List<?>) master.execute("HKEYS", redisKey)).stream()
				.anyMatch(field -> String.valueOf(field).startsWith(LockScripts.WAITER_PREFIX)));
	}

	/** Whether the lock's channel gets a sharded subscriber on the key's master within 2 s. */
	private static boolean awaitShardSubscriber(String redisKey) {
		RedisServer master = cluster.masterFor(redisKey);
		String channel = redisKey + ":released";
		try {
			await().atMost(Duration.ofSeconds(2)).until(() -> Long.valueOf(1)
				.equals(((List<?>) master.execute("PUBSUB", "SHARDNUMSUB", channel)).get(1)));
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

	/** The script calls the masters ran so far: every attempt of a waiter is one. */
	private static long scriptCallsOnMasters() {
		return cluster.masters().stream().mapToLong(LockTestSupport::scriptCalls).sum();
	}

	private RedisLockService wrappedService() {
		return this.lettuce.service(RedisLockService.builder(LockTestSupport.wrapped(this.lettuce.connectionFactory())));
	}

}
