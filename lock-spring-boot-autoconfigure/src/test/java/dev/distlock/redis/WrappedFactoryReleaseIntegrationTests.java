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
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A waiter behind an application's wrapper of a Lettuce factory on one server (issue 26's third defect, seen on a
 * Cluster, has a twin here): Spring Data's listener container tells a non-blocking client by the factory's class, so
 * behind a wrapper it treated Lettuce as a blocking client. The waiter must subscribe and hear the release, not poll:
 * it wakes within milliseconds of a release by a service on the plain factory, and sends a handful of calls while it
 * waits, not one every 20-30 ms.
 */
@ExtendWith(RedisServerExtension.class)
class WrappedFactoryReleaseIntegrationTests {

	private static final Duration HOLDER_TTL = Duration.ofSeconds(30);

	private static final Duration WAIT = Duration.ofSeconds(40);

	private static RedisServer server;

	private LockTestSupport support;

	private final ExecutorService waiting = Executors.newSingleThreadExecutor();

	@BeforeAll
	static void server(RedisServer redis) {
		server = redis;
	}

	@BeforeEach
	void open() {
		this.support = LockTestSupport.forServer(server);
	}

	@AfterEach
	void close() {
		this.waiting.shutdownNow();
		this.support.close();
	}

	@Test
	void wrappedWaiterWakesPromptlyAndQuietlyOnAPlainRelease() throws Exception {
		RedisLockService holder = this.support.service();
		RedisLockService waiter = this.support
			.service(RedisLockService.builder(LockTestSupport.wrapped(this.support.connectionFactory())));
		String name = "wrapped-standalone";
		String redisKey = holder.redisKey(name);
		List<Long> wakeMillis = new ArrayList<>();
		for (int round = 0; round < 5; round++) {
			Lease held = holder.acquire(name, HOLDER_TTL, Duration.ZERO);
			Future<Long> acquired = this.waiting.submit(() -> {
				Lease lease = waiter.acquire(name, HOLDER_TTL, WAIT);
				long at = System.nanoTime();
				lease.release();
				return at;
			});
			await().atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
			await().atMost(Duration.ofSeconds(10)).until(() -> ((List<?>) server.execute("HKEYS", redisKey)).stream()
				.anyMatch(field -> String.valueOf(field).startsWith(LockScripts.WAITER_PREFIX)));
			if (round == 0) {
				long before = LockTestSupport.scriptCalls(server);
				long start = System.nanoTime();
				await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5)).until(() -> true);
				long calls = LockTestSupport.scriptCalls(server) - before;
				assertThat(acquired).isNotDone();
				assertThat(calls).as("script calls over %d ms of waiting",
						TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start))
					.isLessThanOrEqualTo(5);
			}
			held.release();
			long released = System.nanoTime();
			wakeMillis.add(TimeUnit.NANOSECONDS.toMillis(acquired.get(WAIT.toSeconds() + 10, TimeUnit.SECONDS) - released));
		}
		List<Long> sorted = wakeMillis.stream().sorted().toList();
		assertThat(sorted.get(sorted.size() / 2)).as("median ms from release to acquisition in %s", wakeMillis)
			.isLessThanOrEqualTo(50);
		assertThat(sorted.get(sorted.size() - 1)).as("slowest, in %s", wakeMillis).isLessThan(HOLDER_TTL.toMillis() / 10);
	}

}
