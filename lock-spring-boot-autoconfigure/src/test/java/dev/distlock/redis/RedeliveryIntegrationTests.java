package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.PermitScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Every call may have run, and may run twice": a command runs on the server, the connection closes before its reply,
 * and Lettuce (which delivers at least once) sends the same command again after it reconnects. The {@link FaultProxy}
 * makes that happen to exactly one script call ({@link FaultProxy#redeliverNext(String)}, aimed at the script's SHA-1),
 * and each test checks that the call counted once and was reported as what it did the first time. The first test is the
 * issue's reproduction: an inner release run twice used to end the outer hold in Redis while its critical section ran.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedeliveryIntegrationTests {

	/** Long enough that no lease ends by itself during a test, however loaded the machine. */
	private static final Duration TTL = Duration.ofSeconds(60);

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final AtomicInteger keys = new AtomicInteger();

	private static RedisServer server;

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
		// cached up front: a script's first call is NOSCRIPT and then EVAL with its text, which the proxy's marker (the
		// script's SHA-1) would not find
		for (RedisScript<?> script : List.of(LockScripts.ACQUIRE, LockScripts.RELEASE, LockScripts.EXTEND,
				LockScripts.RENEW_ALL, LockScripts.FORCE_RELEASE, ReadWriteScripts.ACQUIRE, ReadWriteScripts.RELEASE,
				ReadWriteScripts.EXTEND, ReadWriteScripts.RENEW_ALL, FairScripts.FAIR_ACQUIRE, FairScripts.FAIR_RELEASE,
				PermitScripts.ACQUIRE, PermitScripts.RELEASE, PermitScripts.EXTEND, PermitScripts.RENEW_ALL)) {
			server.execute("SCRIPT", "LOAD", script.getScriptAsString());
		}
	}

	/**
	 * The lock kinds whose holds count: how to ask for one, and the script that releases it. A semaphore's permit
	 * (issue 30) is asked for with {@value #PERMITS_LIMIT} permits, so that a second holder fits beside it.
	 */
	enum Kind {

		EXCLUSIVE(LockScripts.ACQUIRE, LockScripts.RELEASE),
		WRITE(ReadWriteScripts.ACQUIRE, ReadWriteScripts.RELEASE),
		READ(ReadWriteScripts.ACQUIRE, ReadWriteScripts.RELEASE),
		FAIR(FairScripts.FAIR_ACQUIRE, FairScripts.FAIR_RELEASE),
		PERMITS(PermitScripts.ACQUIRE, PermitScripts.RELEASE);

		static final int PERMITS_LIMIT = 2;

		final RedisScript<?> acquire;

		final RedisScript<?> release;

		Kind(RedisScript<?> acquire, RedisScript<?> release) {
			this.acquire = acquire;
			this.release = release;
		}

		boolean readWrite() {
			return this == WRITE || this == READ;
		}

		LockRequest request(String key, Duration wait) {
			return request(key, TTL, wait);
		}

		LockRequest request(String key, Duration ttl, Duration wait) {
			LockRequest request = LockRequest.of(key, ttl, wait);
			return switch (this) {
				case EXCLUSIVE -> request;
				case WRITE -> request.write();
				case READ -> request.read();
				case FAIR -> request.fair();
				case PERMITS -> request.permits(PERMITS_LIMIT);
			};
		}

		/** The script of a re-entry: a fair lock re-enters with the exclusive one's. */
		RedisScript<?> reentry() {
			return readWrite() ? ReadWriteScripts.ACQUIRE
					: (this == PERMITS) ? PermitScripts.ACQUIRE : LockScripts.ACQUIRE;
		}

		RedisScript<?> extend() {
			return readWrite() ? ReadWriteScripts.EXTEND : (this == PERMITS) ? PermitScripts.EXTEND : LockScripts.EXTEND;
		}

		RedisScript<?> renewAll() {
			return readWrite() ? ReadWriteScripts.RENEW_ALL
					: (this == PERMITS) ? PermitScripts.RENEW_ALL : LockScripts.RENEW_ALL;
		}

	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void anInnerReleaseRunTwiceCountsOnceAndTheOuterHoldStaysInRedis(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);
			Lease outer = s.client.acquire(kind.request(key, WAIT));
			Lease inner = s.client.acquire(kind.request(key, WAIT));
			long runs = s.scriptRuns();

			s.proxy.redeliverNext(kind.release.getSha1());
			inner.release();

			assertThat(s.proxy.redeliveries()).as("connections closed after the release ran").isEqualTo(1);
			assertThat(s.scriptRuns() - runs).as("script calls Redis ran for one release").isGreaterThanOrEqualTo(2);
			assertThat(s.holds(key, outer)).as("holds Redis counts for the outer hold").isEqualTo(1);
			assertThat(s.others.tryAcquire(LockRequest.of(key, TTL, Duration.ZERO).write())).as(
					"another instance while the outer hold runs").isEmpty();
			assertThat(outer.isOwned()).isTrue();
			outer.release();
			s.assertNothingLost();
			assertThat(server.execute("EXISTS", s.client.redisKey(key))).isEqualTo(0L);
		}
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void aLastReleaseRunTwiceIsAReleaseNotALoss(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);
			Lease lease = s.client.acquire(kind.request(key, WAIT));
			long runs = s.scriptRuns();

			s.proxy.redeliverNext(kind.release.getSha1());
			lease.release(); // threw LockLostException when the second run found the lease gone

			assertThat(s.proxy.redeliveries()).isEqualTo(1);
			assertThat(s.scriptRuns() - runs).isGreaterThanOrEqualTo(2);
			s.assertNothingLost();
			assertThat(server.execute("EXISTS", s.client.redisKey(key))).isEqualTo(0L);
			assertThat(s.others.tryAcquire(LockRequest.of(key, TTL, Duration.ZERO))).isPresent();
		}
	}

	/**
	 * Issue 31: a last release that another process waits for publishes a message naming that process; run twice, the
	 * second run answers from the receipt and publishes nothing, so the waiter is named once and gets the lock.
	 */
	@Test
	void aLastReleaseThatNamesAWaitingProcessRunTwicePublishesOnceAndIsARelease() throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(Kind.EXCLUSIVE);
			String channel = RedisLockService.channel(s.client.redisKey(key));
			List<String> messages = new CopyOnWriteArrayList<>();
			io.lettuce.core.RedisClient pubSub = io.lettuce.core.RedisClient
				.create(io.lettuce.core.RedisURI.create(server.host(), server.port()));
			try (io.lettuce.core.pubsub.StatefulRedisPubSubConnection<String, String> listener = pubSub
				.connectPubSub()) {
				listener.addListener(new io.lettuce.core.pubsub.RedisPubSubAdapter<>() {
					@Override
					public void message(String from, String message) {
						messages.add(message);
					}
				});
				listener.sync().subscribe(channel);
				Lease lease = s.client.acquire(Kind.EXCLUSIVE.request(key, WAIT));
				java.util.concurrent.CompletableFuture<Lease> waiting = java.util.concurrent.CompletableFuture
					.supplyAsync(() -> s.others.acquire(Kind.EXCLUSIVE.request(key, WAIT.multipliedBy(2))));
				org.awaitility.Awaitility.await().atMost(WAIT).until(() -> server.execute("HGET",
						s.client.redisKey(key), LockScripts.WAITER_PREFIX + s.others.clientId()) != null);
				org.awaitility.Awaitility.await().atMost(WAIT)
					.until(() -> List.of(channel, 2L).equals(server.execute("PUBSUB", "NUMSUB", channel)));

				s.proxy.redeliverNext(LockScripts.RELEASE.getSha1());
				lease.release();

				assertThat(s.proxy.redeliveries()).isEqualTo(1);
				s.assertNothingLost();
				Lease next = waiting.get(WAIT.toSeconds() * 3, TimeUnit.SECONDS);
				assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
				next.release();
				server.execute("PUBLISH", channel, "probe"); // comes after any message of the release on the listener
				org.awaitility.Awaitility.await().atMost(WAIT).until(() -> messages.contains("probe"));
				assertThat(messages).containsExactly(
						lease.fencingToken() + LockScripts.NAMED_SEPARATOR + s.others.clientId(), "probe");
			}
			finally {
				pubSub.shutdown();
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void aReentryRunTwiceCountsOnce(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);
			Lease outer = s.client.acquire(kind.request(key, WAIT));
			RedisScript<?> acquire = kind.reentry();

			s.proxy.redeliverNext(acquire.getSha1());
			Lease inner = s.client.acquire(kind.request(key, WAIT));

			assertThat(s.proxy.redeliveries()).isEqualTo(1);
			assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
			assertThat(s.holds(key, outer)).as("holds Redis counts after one re-entry").isEqualTo(2);
			inner.release();
			outer.release();
			s.assertNothingLost();
			assertThat(server.execute("EXISTS", s.client.redisKey(key))).isEqualTo(0L);
		}
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void anExtensionRunTwiceAddsOnce(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);
			Lease lease = s.client.acquire(kind.request(key, WAIT));
			RedisScript<?> extend = kind.extend();

			s.proxy.redeliverNext(extend.getSha1());
			lease.extend(Duration.ofSeconds(60), ExtendMode.ADD);

			assertThat(s.proxy.redeliveries()).isEqualTo(1);
			long pttl = (Long) server.execute("PTTL", s.client.redisKey(key));
			assertThat(pttl).as("remaining ms after adding 60 s to a 60 s lease once").isBetween(60_000L, 120_000L);
			lease.release();
			s.assertNothingLost();
		}
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void aNewAcquisitionRunTwiceHoldsOnceWithTheTokenRedisKeeps(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);

			s.proxy.redeliverNext(kind.acquire.getSha1());
			Lease lease = s.client.acquire(kind.request(key, WAIT));

			assertThat(s.proxy.redeliveries()).isEqualTo(1);
			assertThat(s.holds(key, lease)).isEqualTo(1);
			assertThat(s.direct.template().opsForHash().get(s.client.redisKey(key), LockScripts.TOKEN_FIELD))
				.isEqualTo(Long.toString(lease.fencingToken()));
			assertThat(lease.isOwned()).isTrue();
			lease.release();
			s.assertNothingLost();
			assertThat(server.execute("EXISTS", s.client.redisKey(key))).isEqualTo(0L);
		}
	}

	@ParameterizedTest
	@EnumSource(value = Kind.class, names = { "EXCLUSIVE", "WRITE", "FAIR", "PERMITS" })
	void aWaitingAcquisitionRunTwiceWaitsOnceAndGetsTheLock(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);
			// a semaphore's other permit held by a third instance, so that the client waits for the one released
			Lease third = (kind == Kind.PERMITS) ? s.direct.service().acquire(kind.request(key, WAIT)) : null;
			Lease held = s.others.acquire(kind.request(key, WAIT));
			java.util.concurrent.CompletableFuture<Lease> waiting = java.util.concurrent.CompletableFuture
				.supplyAsync(() -> {
					s.proxy.redeliverNext(kind.acquire.getSha1());
					return s.client.acquire(kind.request(key, WAIT.multipliedBy(2)));
				});
			org.awaitility.Awaitility.await().atMost(WAIT).until(() -> s.proxy.redeliveries() == 1);
			held.release();
			Lease lease = waiting.get(WAIT.toSeconds() * 3, TimeUnit.SECONDS);
			assertThat(lease.isOwned()).isTrue();
			assertThat(s.holds(key, lease)).isEqualTo(1);
			lease.release();
			if (third != null) {
				assertThat(third.isOwned()).as("the third instance's permit").isTrue();
				third.release();
			}
			s.assertNothingLost();
			assertThat(server.execute("EXISTS", s.client.redisKey(key))).isEqualTo(0L);
			if (kind == Kind.FAIR) {
				assertThat(server.execute("EXISTS", FairScripts.queueKey(s.client.redisKey(key)))).isEqualTo(0L);
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Kind.class)
	void aWatchdogRenewalRunTwiceKeepsTheLease(Kind kind) throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(kind);
			// renewed every 5 s: a lease time a loaded machine's stalls cannot outlast
			Duration ttl = Duration.ofSeconds(15);
			Lease lease = s.client.acquire(kind.request(key, ttl, WAIT));
			RedisScript<?> renew = kind.renewAll();

			s.proxy.redeliverNext(renew.getSha1());
			org.awaitility.Awaitility.await().atMost(ttl.multipliedBy(2)).until(() -> s.proxy.redeliveries() == 1);

			assertThat(lease.isOwned()).isTrue();
			assertThat(lease.isLost()).isFalse();
			assertThat(s.holds(key, lease)).isEqualTo(1);
			lease.release();
			s.assertNothingLost();
		}
	}

	/**
	 * A fair waiter that gives up leaves the queue with FAIR_LEAVE, always sent as EVAL: run twice, it leaves once, and
	 * the holder's release hands the lease to nobody who left.
	 */
	@Test
	void aFairLeaveRunTwiceLeavesTheQueueOnce() throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(Kind.FAIR);
			Lease held = s.others.acquire(Kind.FAIR.request(key, WAIT));
			s.proxy.redeliverNext("$4\r\nEVAL\r\n"); // the first EVAL (not EVALSHA) the client sends: the leave
			assertThat(s.client.tryAcquire(Kind.FAIR.request(key, Duration.ofSeconds(1)))).isEmpty();
			org.awaitility.Awaitility.await().atMost(WAIT).until(() -> s.proxy.redeliveries() == 1);
			assertThat(server.execute("EXISTS", FairScripts.queueKey(s.client.redisKey(key)))).isEqualTo(0L);
			held.release();
			assertThat(server.execute("EXISTS", s.client.redisKey(key))).isEqualTo(0L);
			Lease next = s.others.acquire(Kind.FAIR.request(key, Duration.ZERO));
			next.release();
			s.assertNothingLost();
		}
	}

	@Test
	void aForcedReleaseRunTwiceNeverEndsTheLeaseTakenAfterIt() throws Exception {
		try (Setup s = new Setup()) {
			String key = s.key(Kind.EXCLUSIVE);
			Lease first = s.others.acquire(LockRequest.of(key, TTL, WAIT));
			// the operator's forced release runs; before the re-sent one does, another instance takes the lock
			s.proxy.redeliverNext(LockScripts.FORCE_RELEASE.getSha1());
			assertThat(s.client.forceRelease(key)).hasValueSatisfying(
					forced -> assertThat(forced.fencingToken()).isEqualTo(first.fencingToken()));
			assertThat(s.proxy.redeliveries()).isEqualTo(1);
			Lease second = s.others.acquire(LockRequest.of(key, TTL, WAIT));
			assertThat(second.isOwned()).isTrue();
			second.release();
		}
	}

	/**
	 * On Redlock every node runs the same scripts: an inner release that one node runs twice leaves that node counting
	 * the outer hold, and the outer release ends the lease everywhere without a loss.
	 */
	@Test
	void onRedlockANodeThatRunsAnInnerReleaseTwiceKeepsTheOuterHold() throws Exception {
		Duration nodeTimeout = Duration.ofSeconds(2); // room for the reconnect and the re-sent call on a loaded machine
		try (RedlockNodesFixture nodes = new RedlockNodesFixture(3);
				FaultProxy proxy = FaultProxy.to(nodes.servers.get(0))) {
			List<org.springframework.data.redis.connection.RedisConnectionFactory> factories = List.of(
					nodes.factory(proxy.host(), proxy.port(), nodeTimeout),
					nodes.factory(nodes.servers.get(1).host(), nodes.servers.get(1).port(), nodeTimeout),
					nodes.factory(nodes.servers.get(2).host(), nodes.servers.get(2).port(), nodeTimeout));
			List<LockLostEvent> lost = new CopyOnWriteArrayList<>();
			RedlockLockService redlock = nodes.service(RedlockLockService.builder(factories)
				.nodeTimeout(nodeTimeout)
				.listener(new LockListener() {
					@Override
					public void lost(LockLostEvent event) {
						lost.add(event);
					}
				}));
			for (RedisServer node : nodes.servers) {
				node.execute("SCRIPT", "LOAD", LockScripts.RELEASE.getScriptAsString());
			}
			String key = "redelivery-redlock-" + keys.incrementAndGet();
			Lease outer = redlock.acquire(key, TTL, WAIT);
			Lease inner = redlock.acquire(key, TTL, WAIT);

			proxy.redeliverNext(LockScripts.RELEASE.getSha1());
			inner.release();

			org.awaitility.Awaitility.await().atMost(WAIT).until(() -> proxy.redeliveries() == 1);
			String redisKey = "lock:{" + key + "}";
			for (RedisServer node : nodes.servers) {
				org.awaitility.Awaitility.await().atMost(WAIT)
					.untilAsserted(() -> assertThat(node.execute("HGET", redisKey, outer.owner())).as(
							"holds on node %s", node).isEqualTo("1"));
			}
			outer.release();
			assertThat(lost).isEmpty();
			// the release returns once a quorum confirmed it; the node behind the proxy, whose connection the
			// re-delivery reset, may answer a little later (seen in a proof run beside two CPU hogs, issue 32)
			for (RedisServer node : nodes.servers) {
				org.awaitility.Awaitility.await().atMost(WAIT)
					.untilAsserted(() -> assertThat(node.execute("EXISTS", redisKey)).as("the lease on node %s", node)
						.isEqualTo(0L));
			}
		}
	}

	/** A server behind a proxy for the client, reached directly by "others", another instance. */
	private static final class Setup implements AutoCloseable {

		final FaultProxy proxy = FaultProxy.to(server);

		final LockTestSupport viaProxy = new LockTestSupport(this.proxy.host(), this.proxy.port());

		final LockTestSupport direct = LockTestSupport.forServer(server);

		final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

		final RedisLockService client;

		final RedisLockService others;

		Setup() {
			this.client = this.viaProxy.service(RedisLockService.builder(this.viaProxy.connectionFactory())
				.listener(new LockListener() {
					@Override
					public void lost(LockLostEvent event) {
						Setup.this.lost.add(event);
					}
				}));
			this.others = this.direct.service();
		}

		String key(Kind kind) {
			return "redelivery-" + kind.name().toLowerCase(java.util.Locale.ROOT) + "-" + keys.incrementAndGet();
		}

		/** Script calls (EVALSHA and EVAL) the server ran so far. */
		long scriptRuns() {
			String info = String.valueOf(server.execute("INFO", "commandstats"));
			long calls = 0;
			for (String line : info.split("\r?\n")) {
				if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
					String field = line.substring(line.indexOf("calls=") + 6);
					calls += Long.parseLong(field.substring(0, field.indexOf(',')));
				}
			}
			return calls;
		}

		/** The holds Redis counts for {@code lease}'s owner, read directly. */
		long holds(String key, Lease lease) {
			Map<Object, Object> hash = this.direct.template().opsForHash().entries(this.client.redisKey(key));
			Object count = hash.get(lease.owner());
			return (count != null) ? Long.parseLong(count.toString()) : 0;
		}

		void assertNothingLost() {
			assertThat(this.lost).as("losses announced").isEmpty();
		}

		@Override
		public void close() {
			this.viaProxy.close();
			this.direct.close();
			this.proxy.close();
		}

	}

}
