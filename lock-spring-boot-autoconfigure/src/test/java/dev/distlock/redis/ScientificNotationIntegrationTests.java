package dev.distlock.redis;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;
import dev.distlock.test.redis.CompatibilityServer;
import dev.distlock.test.redis.RedisErrorException;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redis 7.2.0 to 7.2.4 hand a Lua number with 8 or more trailing zeros to a command in scientific notation
 * (redis/redis#13113, fixed in 7.2.5): {@code HSET} stores {@code 1.7957148e+15} for 1795714800000000 and
 * {@code PEXPIRE k 1e+8} is refused. The scripts compare fencing tokens as strings and pass numbers to
 * {@code PEXPIRE}, so about one token in 10^8, and ttls such as 100,000,000 ms, would break leases there. This class
 * first shows the defect on the server (so a green run proves the server under test has it), then forces such
 * tokens and ttls through every script that makes one and checks the lease still works. Valkey 8.0.1, which answers
 * {@code INFO} as Redis 7.2.4, does not have the defect: the probe says so, and the same lease tests run on it, where
 * they pass whatever the scripts do with numbers. Skipped where the shared servers' folder is absent
 * ({@link CompatibilityServer#require()}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ScientificNotationIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	/** A token far in the future (2030) whose successor ends in 8 zeros: 1895714800000000 µs. */
	private static final long BEFORE_ROUND = 1_895_714_799_999_999L;

	private static final long ROUND = BEFORE_ROUND + 1;

	private static final Map<CompatibilityServer, RedisServer> SERVERS = new EnumMap<>(CompatibilityServer.class);

	private LockTestSupport support;

	/** The number of the last planned owner id ({@link #plannedService()}). */
	private final AtomicLong planned = new AtomicLong();

	/** One thread: a lease handed to a waiter there is re-entered and released there. */
	private final ExecutorService threads = Executors.newSingleThreadExecutor();

	/** The class's server of that kind (started once, by path), flushed, with this test's support on it. */
	private RedisServer server(CompatibilityServer kind) {
		RedisServer server;
		synchronized (SERVERS) {
			server = SERVERS.computeIfAbsent(kind, k -> RedisServer.builder().binary(k.require()).start());
		}
		server.execute("FLUSHALL");
		this.support = LockTestSupport.forServer(server);
		return server;
	}

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		if (this.support != null) {
			this.support.close();
		}
	}

	@AfterAll
	static void stopServers() {
		synchronized (SERVERS) {
			SERVERS.values().forEach(RedisServer::close);
			SERVERS.clear();
		}
	}

	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void luaNumbersWithEightTrailingZerosReachCommandsAsTheServerFormatsThem(CompatibilityServer kind) {
		RedisServer server = server(kind);
		Object stored = server.execute("EVAL",
				"redis.call('set', KEYS[1], 100000000 + 0) return redis.call('get', KEYS[1])", "1", "k");
		Object token = server.execute("EVAL",
				"redis.call('hset', KEYS[1], '~t', " + ROUND + ") return redis.call('hget', KEYS[1], '~t')", "1", "h");
		String expire = "redis.call('set', KEYS[1], 'v') return redis.call('pexpire', KEYS[1], 100000000 + 0)";
		if (kind == CompatibilityServer.REDIS_7_2_4) {
			assertThat(stored).isEqualTo("1e+8");
			assertThat(token).isEqualTo("1.8957148e+15");
			assertThatExceptionOfType(RedisErrorException.class)
				.isThrownBy(() -> server.execute("EVAL", expire, "1", "e"))
				.withMessageContaining("not an integer");
		}
		else {
			assertThat(stored).isEqualTo("100000000");
			assertThat(token).isEqualTo(Long.toString(ROUND));
			assertThat(server.execute("EVAL", expire, "1", "e")).isEqualTo(1L);
		}
	}

	/**
	 * A service whose owner ids are {@code <client id>:planned-<n>} instead of random ones, so that a test knows the
	 * id of its next acquisition ({@link #nextOwner}).
	 */
	private RedisLockService plannedService() {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.ownerIdParts(() -> "planned-" + this.planned.incrementAndGet()));
	}

	/**
	 * The owner id a {@linkplain #plannedService() planned service} gives its next acquisition, read off a first lease
	 * so that a change of the format fails here, plainly.
	 */
	private String nextOwner(RedisLockService service) {
		Lease first = service.acquire("owner-probe", TTL, Duration.ZERO);
		assertThat(first.owner()).as("planned owner ids").isEqualTo(service.clientId() + ":planned-" + this.planned.get());
		first.release();
		return service.clientId() + ":planned-" + (this.planned.get() + 1);
	}

	/**
	 * Leaves in {@code redisKey} what an earlier attempt of {@code owner}'s acquisition whose reply was lost leaves: the
	 * owner's hold, on a lease whose last token is {@code token}. ACQUIRE adopts it as a new lease, with the greater of
	 * that token + 1 and the server's clock.
	 */
	private static void leftByALostReply(RedisServer server, String redisKey, String owner, long token) {
		server.execute("HSET", redisKey, owner, "1", "~t", Long.toString(token));
		server.execute("PEXPIRE", redisKey, Long.toString(TTL.toMillis()));
	}

	/** The lease works and leaves nothing behind: the checks of every test below, in the order a holder uses them. */
	private static void reenterRenewExtendRelease(RedisServer server, RedisLockService service, Lease lease,
			LockRequest reentry) {
		String key = service.redisKey(lease.key());
		Lease inner = service.acquire(reentry);
		assertThat(inner.fencingToken()).as("the re-entered token").isEqualTo(ROUND);
		assertThat(server.execute("HGET", key, lease.owner())).isEqualTo("2");
		inner.release();
		lease.renew();
		lease.extend(Duration.ofSeconds(10));
		assertThat((Long) server.execute("PTTL", key)).isGreaterThan(TTL.toMillis());
		assertThat(lease.isOwned()).isTrue();
		assertThat(server.execute("HGET", key, "~t")).as("the stored token").isEqualTo(Long.toString(ROUND));
		lease.release();
		assertThat(lease.isLost()).isFalse();
		assertThat(server.execute("EXISTS", key)).isEqualTo(0L);
	}

	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void anAdoptedLeaseWhoseTokenEndsInEightZerosIsReenteredRenewedExtendedAndReleased(CompatibilityServer kind) {
		RedisServer server = server(kind);
		RedisLockService service = plannedService();
		String owner = nextOwner(service);
		leftByALostReply(server, service.redisKey("round"), owner, BEFORE_ROUND);
		Lease lease = service.acquire("round", TTL, Duration.ZERO);
		assertThat(lease.owner()).isEqualTo(owner);
		assertThat(lease.fencingToken()).isEqualTo(ROUND);
		reenterRenewExtendRelease(server, service, lease, LockRequest.of("round", TTL, Duration.ZERO));
	}

	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void aLeaseHandedOverInTheProcessWithATokenEndingInEightZerosIsRenewedAndReleased(CompatibilityServer kind) throws Exception {
		RedisServer server = server(kind);
		RedisLockService service = plannedService();
		String owner = nextOwner(service);
		leftByALostReply(server, service.redisKey("handed"), owner, BEFORE_ROUND - 1);
		Lease holder = service.acquire("handed", TTL, Duration.ZERO);
		assertThat(holder.fencingToken()).isEqualTo(BEFORE_ROUND);
		Future<Lease> waiter = this.threads.submit(() -> service.acquire("handed", TTL, Duration.ofSeconds(60)));
		await().atMost(Duration.ofSeconds(20)).until(() -> service.waitingThreads() == 1);
		holder.release(); // HAND_OVER: the waiting thread of this process gets the lease with the next token
		Lease handed = waiter.get(20, TimeUnit.SECONDS);
		assertThat(handed.fencingToken()).isEqualTo(ROUND);
		Future<?> done = this.threads.submit(() -> {
			// the handed lease belongs to the waiter's thread: it re-enters and releases there
			reenterRenewExtendRelease(server, service, handed, LockRequest.of("handed", TTL, Duration.ZERO));
			return null;
		});
		done.get(30, TimeUnit.SECONDS);
	}

	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void aFairLeaseHandedOnWithATokenEndingInEightZerosIsRenewedAndReleased(CompatibilityServer kind) throws Exception {
		RedisServer server = server(kind);
		RedisLockService holderService = plannedService();
		RedisLockService waiting = this.support.service();
		String owner = nextOwner(holderService);
		String key = holderService.redisKey("fair-round");
		// FAIR_ACQUIRE enters a lease its owner already holds (handed to it, or a lost reply) with the stored token
		leftByALostReply(server, key, owner, BEFORE_ROUND);
		Lease holder = holderService.acquire(LockRequest.of("fair-round", TTL, Duration.ZERO).fair());
		assertThat(holder.fencingToken()).isEqualTo(BEFORE_ROUND);
		Future<Lease> next = this.threads.submit(
				() -> waiting.acquire(LockRequest.of("fair-round", TTL, Duration.ofSeconds(60)).fair()));
		await().atMost(Duration.ofSeconds(20)).until(() -> holderService.fairQueueLength("fair-round") == 1);
		holder.release(); // FAIR_RELEASE hands the lease on to the queued waiter with the next token
		Lease handed = next.get(20, TimeUnit.SECONDS);
		assertThat(handed.fencingToken()).isEqualTo(ROUND);
		Future<?> done = this.threads.submit(() -> {
			reenterRenewExtendRelease(server, waiting, handed,
					LockRequest.of("fair-round", TTL, Duration.ZERO).fair());
			return null;
		});
		done.get(30, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(10)).until(() -> ((List<?>) server.execute("KEYS", "*")).isEmpty());
	}

	/** 100,000,000 ms (27.8 h) as a ttl the watchdog renews to, and as an extension that replaces the ttl. */
	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void ttlsAndExtensionsEndingInEightZerosAreSet(CompatibilityServer kind) {
		RedisServer server = server(kind);
		RedisLockService service = this.support.service();
		Duration round = Duration.ofMillis(100_000_000);
		Lease lease = service.acquire("long", round, Duration.ZERO);
		String key = service.redisKey("long");
		lease.extend(Duration.ofSeconds(30), ExtendMode.REPLACE);
		lease.renew();
		assertThat((Long) server.execute("PTTL", key)).as("renewed to the lease time").isGreaterThan(99_000_000L);
		lease.extend(Duration.ofSeconds(30), ExtendMode.REPLACE);
		lease.extend(round, ExtendMode.REPLACE);
		assertThat((Long) server.execute("PTTL", key)).as("replaced").isGreaterThan(99_000_000L);
		assertThat(lease.isOwned()).isTrue();
		lease.release();
		assertThat(server.execute("EXISTS", key)).isEqualTo(0L);
	}

}
