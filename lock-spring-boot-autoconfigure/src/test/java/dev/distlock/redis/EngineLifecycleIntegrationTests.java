package dev.distlock.redis;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationEventPublisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The engine's threads come from the application's factory when it gives one, and a stop reports held leases. */
@ExtendWith({ RedisServerExtension.class, OutputCaptureExtension.class })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EngineLifecycleIntegrationTests {

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void everyEngineThreadComesFromTheGivenFactoryNamedByItsRole() throws Exception {
		Set<Thread> made = ConcurrentHashMap.newKeySet();
		ThreadFactory factory = task -> {
			Thread thread = new Thread(task);
			thread.setDaemon(true);
			made.add(thread);
			return thread;
		};
		try (LockTestSupport support = LockTestSupport.forServer(redis)) {
			ApplicationEventPublisher events = event -> {
			};
			RedisLockService service = support.service(RedisLockService.builder(support.connectionFactory())
				.threadFactory(factory).eventPublisher(events).threadNamePrefix("engine-test"));
			// exercise every thread: renewals (watchdog), waiting (pub/sub), a lost lease (events), a discard (reconcile)
			// 6 s, renewed every 2 s: a loaded machine's stall cannot lose it before its first renewal
			Lease held = service.acquire("threads", Duration.ofSeconds(6), Duration.ZERO);
			CompletableFuture<Optional<Lease>> waiting = CompletableFuture
				.supplyAsync(() -> service.tryAcquire("threads", Duration.ofSeconds(5), Duration.ofSeconds(10)));
			await().atMost(Duration.ofSeconds(5)).until(() -> service.waitingThreads() == 1);
			await().atMost(Duration.ofSeconds(10))
				.until(() -> service.activeLeases().stream().anyMatch(lease -> lease.lastRenewal() != null));
			redis.execute("DEL", service.redisKey("threads"));
			await().atMost(Duration.ofSeconds(10)).until(held::isLost);
			waiting.get(10, TimeUnit.SECONDS).orElseThrow().release();

			Set<String> engineThreads = ConcurrentHashMap.newKeySet();
			Thread.getAllStackTraces().keySet().stream().filter(thread -> thread.getName().startsWith("engine-test-"))
				.forEach(thread -> {
					assertThat(made).as("thread %s comes from the factory", thread.getName()).contains(thread);
					engineThreads.add(thread.getName().substring("engine-test-".length() + 7)); // after the 6 characters of the client id
				});
			assertThat(engineThreads).contains("watchdog", "watchdog-renewal", "pubsub", "events");
		}
	}

	@Test
	void aStopWithLeasesHeldSaysWhichExpireUnrenewed(CapturedOutput output) {
		try (LockTestSupport support = LockTestSupport.forServer(redis)) {
			RedisLockService service = support.service();
			Lease lease = service.acquire("held-at-stop", Duration.ofSeconds(30), Duration.ZERO);
			service.stop();
			assertThat(service.isRunning()).isFalse();
			assertThat(output).contains("Lock service stops with 1 lease(s) held").contains("'held-at-stop' (token "
					+ lease.fencingToken());
			// not released: its holder may still be inside its critical section
			assertThat(redis.execute("HGET", service.redisKey("held-at-stop"), lease.owner())).isEqualTo("1");
			redis.execute("DEL", service.redisKey("held-at-stop"));
		}
	}

}
