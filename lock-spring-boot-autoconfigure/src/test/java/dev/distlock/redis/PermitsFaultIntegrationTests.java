package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.core.Lease;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.test.redis.FaultProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A semaphore's permits (issue 30) under faults between a client and Redis, as {@link ReadWriteLockFaultIntegrationTests}
 * for the read-write lease ("every call that timed out may have run"): what a permit script whose reply was lost left
 * in Redis is removed once Redis answers again (the reconciler's discard), only the caller's own permit, never another
 * holder's; a permit whose release went unanswered is given back; a partitioned holder's permit comes back at its
 * lease time and its late renewals do not revive it; an extension whose reply was lost leaves the client's picture and
 * Redis's in agreement. Throughout each test a {@link LiveHolders} monitor reads the semaphore straight from the
 * server: never more live holders than permits at any instant it sees. The permit scripts run twice (re-delivery) are
 * in {@link RedeliveryIntegrationTests}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PermitsFaultIntegrationTests extends OneServerFixture {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final int PERMITS = 2;

	/** As {@link ReadWriteLockFaultIntegrationTests}'s: the window in which a test sees what a lost call wrote. */
	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private final List<LiveHolders> monitors = new ArrayList<>();

	@AfterEach
	void stopThreads() {
		this.monitors.forEach(LiveHolders::close);
		this.threads.shutdownNow();
	}

	@Test
	void aPermitAcquireWhoseReplyIsLostLeavesNoPermitAndTheOtherHolderKeepsHis() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-acquire");
			LiveHolders live = monitor(key);
			warmUp(client, "lost-acquire");
			Lease other = acquire(others, permits("lost-acquire", Duration.ZERO));
			proxy.dropReplies();
			CompletableFuture<Void> attempt = CompletableFuture.runAsync(() -> assertThatExceptionOfType(
					LockUnavailableException.class).isThrownBy(() -> client.tryAcquire(permits("lost-acquire", Duration.ZERO))));
			// the script ran: Redis counts a permit the client does not know (watched while the call waits for its
			// reply: once it gave up, the reconciler's discard, whose reply is lost too, may already have run)
			AtomicReference<String> unknown = new AtomicReference<>();
			await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(2))
				.until(() -> fields(key).stream().filter(field -> field.startsWith(client.clientId())).peek(unknown::set)
					.findAny().isPresent());
			attempt.get(30, TimeUnit.SECONDS);
			proxy.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> fields(key).stream()
				.noneMatch(field -> field.contains(client.clientId())));
			assertThat(client.activeLeases()).isEmpty();
			assertThat(fields(key)).contains(other.owner());
			assertThat(other.isOwned()).isTrue();
			// the discard run a second time (a re-delivery of the reconciler's call): it removes nothing more
			assertThat(this.server.execute("EVAL", ReadWriteScripts.DISCARD.getScriptAsString(), "1", key, unknown.get(),
					key + ":released", "")).isEqualTo(0L);
			assertThat(fields(key)).contains(other.owner(), "~e:" + other.owner(), "~k:" + other.owner(), "~p");
			// the permit is not stranded: the second one is free for another instance at once
			Lease second = acquire(this.support.service(), permits("lost-acquire", Duration.ZERO));
			second.release();
			other.release();
			live.assertNeverAboveLimit();
			assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
		}
	}

	@Test
	void aPermitReleaseWhoseReplyIsLostGivesThePermitBackAndTheOtherHolderKeepsHis() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-release");
			LiveHolders live = monitor(key);
			warmUp(client, "lost-release");
			Lease mine = acquire(client, permits("lost-release", Duration.ZERO));
			Lease mineAgain = acquire(client, permits("lost-release", Duration.ZERO));
			assertThat(mineAgain.owner()).as("a re-entry takes no second permit").isEqualTo(mine.owner());
			Lease other = acquire(others, permits("lost-release", Duration.ZERO));
			mineAgain.release();
			proxy.dropReplies();
			assertThatExceptionOfType(LockException.class).isThrownBy(mine::release);
			proxy.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> fields(key).stream()
				.noneMatch(field -> field.contains(client.clientId())));
			assertThat(client.activeLeases()).isEmpty();
			assertThat(other.isOwned()).isTrue();
			// the permit given back is free for another instance at once, not at the end of its lease time
			Lease next = acquire(this.support.service(), permits("lost-release", Duration.ZERO));
			next.release();
			other.release();
			live.assertNeverAboveLimit();
			assertThat(LockTestSupport.leftKeys(this.server)).isEmpty();
		}
	}

	@Test
	void aPartitionedHoldersPermitComesBackAtItsTtlToAWaiterAndItsLateRenewalsDoNotReviveIt() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			RedisLockService waiting = this.support.service();
			String key = client.redisKey("partitioned");
			LiveHolders live = monitor(key);
			warmUp(client, "partitioned");
			warmUp(waiting, "partitioned");
			Duration ttl = Duration.ofMillis(1000);
			Lease partitioned = acquire(client, LockRequest.of("partitioned", ttl, Duration.ZERO).permits(PERMITS));
			Lease other = acquire(others, permits("partitioned", Duration.ZERO));
			proxy.blackhole();
			// both permits are held: the waiter gets the partitioned holder's once its deadline passed in Redis
			Future<Lease> waiter = this.threads.submit(() -> acquire(waiting, permits("partitioned", Duration.ofSeconds(30))));
			Lease taken = waiter.get(30, TimeUnit.SECONDS);
			assertThat(taken.fencingToken()).isGreaterThan(partitioned.fencingToken());
			await().atMost(Duration.ofSeconds(20)).until(partitioned::isLost);
			// the renewals the partition held run now: they find the holder's deadline passed and revive nothing
			proxy.heal();
			// a call on the client's connection answered: what the partition held on it ran before
			await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
				.until(() -> client.tryAcquire(LockRequest.of("partitioned-probe", TTL, Duration.ZERO)).map(probe -> {
					probe.release();
					return true;
				}).orElse(false));
			assertThat(fields(key)).doesNotContain(partitioned.owner(), "~e:" + partitioned.owner());
			assertThat(taken.isOwned()).isTrue();
			assertThat(other.isOwned()).isTrue();
			assertThatExceptionOfType(LockException.class).isThrownBy(partitioned::release);
			taken.release();
			other.release();
			live.assertNeverAboveLimit();
			await().atMost(Duration.ofSeconds(20)).until(() -> LockTestSupport.leftKeys(this.server).isEmpty());
		}
	}

	@Test
	void anExtensionWhoseReplyIsLostLeavesTheClientAndRedisInAgreement() throws Exception {
		try (FaultProxy proxy = FaultProxy.to(this.server);
				LockTestSupport viaProxy = new LockTestSupport(proxy.host(), proxy.port())) {
			RedisLockService client = viaProxy.service(RedisLockService.builder(viaProxy.connectionFactory(COMMAND_TIMEOUT)));
			RedisLockService others = this.support.service();
			String key = client.redisKey("lost-extend");
			LiveHolders live = monitor(key);
			warmUp(client, "lost-extend");
			Lease mine = acquire(client, permits("lost-extend", Duration.ZERO));
			Lease other = acquire(others, permits("lost-extend", Duration.ZERO));
			proxy.dropReplies();
			assertThatExceptionOfType(LockException.class).isThrownBy(() -> mine.extend(Duration.ofSeconds(30)));
			proxy.heal();
			// the extension may or may not have run; either way a permit the client counts is in Redis, with its
			// token, and valid there at least as long as the client believes
			await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
				List<LeaseSnapshot> believed = client.activeLeases().stream().filter(lease -> !lease.lost()).toList();
				for (LeaseSnapshot lease : believed) {
					assertThat(fields(key)).contains(lease.owner());
					assertThat(this.server.execute("HGET", key, "~k:" + lease.owner()))
						.isEqualTo(Long.toString(lease.fencingToken()));
				}
				if (believed.isEmpty()) {
					assertThat(fields(key)).doesNotContain(mine.owner());
				}
			});
			if (mine.isHeld() && !mine.isLost()) {
				long deadline = Long.parseLong((String) this.server.execute("HGET", key, "~e:" + mine.owner()));
				assertThat(mine.validUntil().toEpochMilli()).as("the client's validity, against the permit's deadline")
					.isLessThanOrEqualTo(latestClientMillis(deadline));
				assertThat(mine.isOwned()).isTrue();
				mine.release();
			}
			assertThat(other.isOwned()).isTrue();
			other.release();
			live.assertNeverAboveLimit();
			await().atMost(Duration.ofSeconds(20)).until(() -> LockTestSupport.leftKeys(this.server).isEmpty());
		}
	}

	/** Every permit script once through the proxy, before any fault: the first calls load the client's code. */
	private static void warmUp(RedisLockService client, String key) {
		Lease lease = acquire(client, LockRequest.of(key + "-warm-up", TTL, Duration.ofSeconds(10)).permits(PERMITS));
		lease.extend(Duration.ofSeconds(1));
		lease.isOwned();
		lease.release();
	}

	private static Lease acquire(RedisLockService service, LockRequest request) {
		return service.tryAcquire(request).orElseThrow(() -> new AssertionError("not acquired: " + request));
	}

	private static LockRequest permits(String key, Duration wait) {
		return LockRequest.of(key, TTL, wait).permits(PERMITS);
	}

	private List<String> fields(String redisKey) {
		Object reply = this.server.execute("HKEYS", redisKey);
		List<String> fields = new ArrayList<>();
		if (reply instanceof List<?> list) {
			list.forEach(field -> fields.add(String.valueOf(field)));
		}
		return fields;
	}

	/**
	 * The latest moment on this JVM's clock that {@code serverMillis} on the server's clock may be: the server's TIME
	 * was read at some instant between {@code before} and {@code after} here.
	 */
	private long latestClientMillis(long serverMillis) {
		long before = System.currentTimeMillis();
		List<?> time = (List<?>) this.server.execute("TIME");
		long after = System.currentTimeMillis();
		long serverNow = Long.parseLong(String.valueOf(time.get(0))) * 1000
				+ Long.parseLong(String.valueOf(time.get(1))) / 1000;
		return serverMillis - serverNow + after;
	}

	private LiveHolders monitor(String redisKey) {
		LiveHolders monitor = new LiveHolders(redisKey);
		this.monitors.add(monitor);
		this.threads.submit(monitor);
		return monitor;
	}

	/**
	 * Reads one semaphore straight from the server (not through a proxy), again and again until closed: how many of
	 * its holders are live (their deadline not passed on the server's clock) against its number of permits, in one
	 * atomic script. A holder whose deadline passed is no holder, though no script has dropped it yet. Sampling,
	 * not synchronisation: it cannot prove the invariant, only catch a breach while it lasts.
	 */
	private final class LiveHolders implements Runnable, AutoCloseable {

		private static final String READ = """
				local clock = redis.call('time')
				local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
				local fields = redis.call('hgetall', KEYS[1])
				local live, permits = 0, 0
				for i = 1, #fields, 2 do
				  local f = fields[i]
				  if f == '~p' then
				    permits = tonumber(fields[i + 1])
				  elseif string.sub(f, 1, 1) ~= '~' then
				    local deadline = redis.call('hget', KEYS[1], '~e:' .. f)
				    if deadline and tonumber(deadline) >= now then live = live + 1 end
				  end
				end
				return {live, permits}
				""";

		private final String redisKey;

		private final AtomicLong most = new AtomicLong();

		private final List<String> breaches = new java.util.concurrent.CopyOnWriteArrayList<>();

		private final AtomicLong reads = new AtomicLong();

		private volatile boolean running = true;

		LiveHolders(String redisKey) {
			this.redisKey = redisKey;
		}

		@Override
		public void run() {
			while (this.running) {
				List<?> reply;
				try {
					reply = (List<?>) PermitsFaultIntegrationTests.this.server.execute("EVAL", READ, "1", this.redisKey);
				}
				catch (RuntimeException ex) {
					continue; // a read a loaded machine timed out: the next one samples again
				}
				long live = (Long) reply.get(0);
				long permits = (Long) reply.get(1);
				this.most.accumulateAndGet(live, Math::max);
				if (live > PERMITS || (permits != 0 && live > permits)) {
					this.breaches.add(live + " live holders of " + permits + " permits: "
							+ PermitsFaultIntegrationTests.this.fields(this.redisKey));
				}
				this.reads.incrementAndGet();
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // pacing: a socket a read
			}
		}

		void assertNeverAboveLimit() {
			long seen = this.reads.get();
			await().atMost(Duration.ofSeconds(10)).until(() -> this.reads.get() > seen + 1);
			assertThat(this.breaches).as("moments with more live holders than permits in Redis").isEmpty();
			assertThat(this.most.get()).as("the most live holders Redis had at once").isBetween(1L, (long) PERMITS);
		}

		@Override
		public void close() {
			this.running = false;
		}

	}

}
