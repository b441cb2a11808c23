package dev.distlock.redis;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.ExtendMode;
import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockRequest;
import dev.distlock.test.redis.CompatibilityServer;
import dev.distlock.test.redis.RedisServer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The lock contract's essentials on the servers of the compatibility matrix that the full build does not otherwise
 * run, Redis 7.2.4 and Valkey 8.0.1, each started by path from the shared servers' folder ({@link CompatibilityServer}):
 * every test is skipped, saying where the folder was looked for, where it is absent (a fresh clone). The matrix cells
 * {@code redis-7.2.4} and {@code valkey-8.0.1} run the whole contract suite on them; this class keeps the essentials
 * in every full build where the folder is, and pins down what each server says it is, Valkey's differences included.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CompatibilityServersIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private static final Map<CompatibilityServer, RedisServer> SERVERS = new EnumMap<>(CompatibilityServer.class);

	private LockTestSupport support;

	private final ExecutorService threads = Executors.newCachedThreadPool();

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
	void closeSupport() {
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

	/** A field of {@code INFO server}, or null where the server has no such field. */
	static @Nullable String info(RedisServer server, String field) {
		for (String line : ((String) server.execute("INFO", "server")).split("\r?\n")) {
			if (line.startsWith(field + ":")) {
				return line.substring(field.length() + 1).trim();
			}
		}
		return null;
	}

	@Test
	void redis724SaysItIsRedis724() {
		RedisServer server = server(CompatibilityServer.REDIS_7_2_4);
		assertThat(server.version()).isEqualTo("7.2.4");
		assertThat(info(server, "redis_version")).isEqualTo("7.2.4");
		assertThat(info(server, "redis_mode")).isEqualTo("standalone");
		assertThat(info(server, "server_name")).isNull();
	}

	/**
	 * Valkey answers {@code INFO server} as the Redis it forked from, 7.2.4, for clients that parse it, and says what it
	 * is in fields of its own; {@code redis_mode} became {@code server_mode}. So anything that tells servers apart by
	 * {@code redis_version} takes Valkey 8.0.1 for Redis 7.2.4 (which it is not: see
	 * {@link ScientificNotationIntegrationTests}); the engine reads neither field, and {@code HELLO} says "valkey".
	 */
	@Test
	void valkeySaysItIsValkey801AndAnswersAsRedis724() {
		RedisServer server = server(CompatibilityServer.VALKEY_8_0_1);
		assertThat(server.version()).as("--version").isEqualTo("8.0.1");
		assertThat(info(server, "server_name")).isEqualTo("valkey");
		assertThat(info(server, "valkey_version")).isEqualTo("8.0.1");
		assertThat(info(server, "redis_version")).isEqualTo("7.2.4");
		assertThat(info(server, "server_mode")).isEqualTo("standalone");
		assertThat(info(server, "redis_mode")).isNull();
		assertThat(String.valueOf(server.execute("HELLO", "2"))).contains("valkey", "8.0.1");
	}

	/**
	 * Exclusion between two instances, re-entry, the store's answer to {@code holder}, a waiter of another instance
	 * woken by the release message, extension (add and replace), a renewal, a greater token for the next holder, and
	 * nothing left behind.
	 */
	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void exclusiveLocksExcludeReenterWakeExtendAndLeaveNothing(CompatibilityServer kind) throws Exception {
		RedisServer server = server(kind);
		RedisLockService one = this.support.service();
		RedisLockService two = this.support.service();
		Lease outer = one.acquire("essentials", TTL, Duration.ZERO);
		Lease inner = one.acquire("essentials", TTL, Duration.ZERO);
		assertThat(two.tryAcquire("essentials", TTL, Duration.ZERO)).isEmpty();
		assertThat(two.holder("essentials")).hasValueSatisfying(holder -> {
			assertThat(holder.holds()).isEqualTo(2);
			assertThat(holder.fencingToken()).isEqualTo(outer.fencingToken());
		});
		Future<Lease> waiting = this.threads.submit(() -> two.acquire("essentials", TTL, Duration.ofSeconds(60)));
		await().atMost(Duration.ofSeconds(20)).until(() -> two.waitingThreads() == 1);
		inner.release();
		assertThat(one.holder("essentials")).hasValueSatisfying(holder -> assertThat(holder.holds()).isEqualTo(1));
		outer.release();
		// 60 s of wait and a 30 s lease: only the release message gets the waiter in within the next 20 s
		Lease next = waiting.get(20, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isGreaterThan(outer.fencingToken());
		String key = two.redisKey("essentials");
		next.extend(Duration.ofSeconds(60));
		assertThat((Long) server.execute("PTTL", key)).isGreaterThan(TTL.toMillis());
		next.extend(Duration.ofSeconds(45), ExtendMode.REPLACE);
		assertThat((Long) server.execute("PTTL", key)).isBetween(TTL.toMillis(), 45_000L);
		next.renew();
		assertThat(next.isOwned()).isTrue();
		next.release();
		assertThat(server.execute("EXISTS", key)).isEqualTo(0L);
		assertThat(one.isLocked("essentials")).isFalse();
	}

	/** The watchdog keeps a lease alive past its ttl, renewal after renewal, and the lease goes with its release. */
	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void theWatchdogRenewsALeaseForSeveralTtls(CompatibilityServer kind) {
		RedisServer server = server(kind);
		AtomicInteger renewed = new AtomicInteger();
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS)
			.listener(new LockListener() {
				@Override
				public void renewed(String name, boolean success) {
					if (success) {
						renewed.incrementAndGet();
					}
				}
			}));
		// renewed every 600 ms, the lease outlives stalls of 5 s (a 1.5 s lease renewed every 500 ms did not, issue 32)
		Duration ttl = LockTestSupport.RENEWED_TTL;
		Lease lease = service.acquire("renewed", ttl, Duration.ZERO);
		// eleven renewals, each sent a period (600 ms) after the one before, however late they come: the last went out
		// after the ttl had passed, when the lease would have expired without them
		await().atMost(ttl.plus(LockTestSupport.RENEWAL_DEADLINE)).until(() -> renewed.get() >= 11);
		assertThat(lease.isOwned()).isTrue();
		assertThat(lease.isLost()).isFalse();
		lease.release();
		assertThat(server.execute("EXISTS", service.redisKey("renewed"))).isEqualTo(0L);
	}

	/** A fair lock hands its lease to the waiter of another instance that queued, with a greater token. */
	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void aFairLockIsHandedToTheQueuedWaiterOfAnotherInstance(CompatibilityServer kind) throws Exception {
		RedisServer server = server(kind);
		RedisLockService holder = this.support.service();
		RedisLockService waiting = this.support.service();
		Lease first = holder.acquire(LockRequest.of("fair", TTL, Duration.ZERO).fair());
		Future<Lease> next = this.threads.submit(() -> waiting.acquire(LockRequest.of("fair", TTL, Duration.ofSeconds(60)).fair()));
		await().atMost(Duration.ofSeconds(20)).until(() -> holder.fairQueueLength("fair") == 1);
		first.release();
		Lease handed = next.get(20, TimeUnit.SECONDS);
		assertThat(handed.fencingToken()).isGreaterThan(first.fencingToken());
		handed.renew();
		handed.release();
		await().atMost(Duration.ofSeconds(10)).until(() -> ((List<?>) server.execute("KEYS", "*")).isEmpty());
	}

	/** Readers of two instances hold at once; a writer waits for both, then gets the lock with a greater token. */
	@ParameterizedTest
	@EnumSource(CompatibilityServer.class)
	void readersShareAndAWriterWaitsForThemAll(CompatibilityServer kind) throws Exception {
		RedisServer server = server(kind);
		RedisLockService one = this.support.service();
		RedisLockService two = this.support.service();
		Lease reading = one.acquire(LockRequest.of("rw", TTL, Duration.ZERO).read());
		Lease alsoReading = two.acquire(LockRequest.of("rw", TTL, Duration.ZERO).read());
		// from a thread that reads under neither service: this thread's write request would be an upgrade, refused
		Future<Optional<Lease>> refused = this.threads.submit(() -> one.tryAcquire(LockRequest.of("rw", TTL, Duration.ZERO).write()));
		assertThat(refused.get(20, TimeUnit.SECONDS)).isEmpty();
		Future<Lease> writer = this.threads.submit(() -> two.acquire(LockRequest.of("rw", TTL, Duration.ofSeconds(60)).write()));
		await().atMost(Duration.ofSeconds(20)).until(() -> two.waitingThreads() == 1);
		reading.release();
		assertThat(writer).isNotDone();
		alsoReading.release();
		Lease writing = writer.get(20, TimeUnit.SECONDS);
		assertThat(writing.fencingToken()).isGreaterThan(0L);
		assertThat(one.tryAcquire(LockRequest.of("rw", TTL, Duration.ZERO).read())).isEmpty();
		writing.renew();
		writing.release();
		await().atMost(Duration.ofSeconds(10)).until(() -> ((List<?>) server.execute("KEYS", "*")).isEmpty());
	}

}
