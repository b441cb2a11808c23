package dev.distlock.actuate;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.actuate.ActuatorTestApp.Client;
import dev.distlock.actuate.ActuatorTestApp.Response;
import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.observability.Catalog;
import dev.distlock.observability.LockMetrics;
import dev.distlock.observability.LockServiceMetrics;
import dev.distlock.redis.LockTestSupport;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code locks} endpoint and health over real HTTP, in a web application with Actuator, against a real Redis:
 * a lease held by a blocked annotated call is listed with its fields and forgotten after its release, and listed as
 * lost once Redis lost it, until its holder returns; the forced release does not exist by default; health goes DOWN
 * while Redis hangs or is stopped with a lease held, and UP again once renewals succeed or the lease is known lost.
 */
@SpringBootTest(classes = ActuatorTestApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=locks,health",
				// owner ids and fencing tokens to anonymous callers: these tests read them (masking is tested apart)
				"management.endpoint.locks.show-values=always",
				"management.endpoint.health.show-details=always", "spring.data.redis.timeout=2s",
				// a 20 s lease renewed every second: renewals fail soon after Redis hangs, the lease outlives the test
				"distlock.renewal-ratio=0.05" })
@DirtiesContext
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocksActuatorIntegrationTests {

	private static final Duration DEADLINE = Duration.ofSeconds(15);

	/**
	 * How long a restarted Redis may take to be noticed: Lettuce reconnects with a growing back-off (up to twice the
	 * outage), and at the latest the 20 s lease runs out by the watchdog's clock.
	 */
	private static final Duration RESTART_DEADLINE = Duration.ofSeconds(40);

	private static final RedisServer redis = RedisServer.start();

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Catalog catalog;

	@Autowired
	private RedisLockService lockService;

	@Autowired
	private MeterRegistry meterRegistry;

	private Client client;

	private final ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> new Thread(runnable, "blocked-caller"));

	@BeforeEach
	void setUp() throws IOException {
		// examples of the JSON for the docs
		Files.createDirectories(Path.of("target"));
		this.client = new Client(this.port);
		this.catalog.arm();
		// the first commands of a fresh connection can be slow on a loaded machine: not what these tests are about
		await().atMost(DEADLINE).ignoreExceptions().until(() -> {
			this.lockService.acquire("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
			return true;
		});
	}

	@AfterEach
	void tearDown() throws InterruptedException {
		this.catalog.release();
		this.executor.shutdown();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
		if (redis.isPaused()) {
			redis.resume();
		}
		if (!redis.isRunning()) {
			redis.restart();
		}
	}

	private CompletableFuture<String> holdInBackground(String id) throws InterruptedException {
		CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
			try {
				return this.catalog.hold(id);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		}, this.executor);
		// the call holds its lock, or (on failure) its exception tells why
		await().atMost(DEADLINE).until(() -> this.catalog.awaitEntered(0) || call.isDone());
		if (call.isDone()) {
			call.join();
		}
		return call;
	}

	@Test
	void theEndpointListsALeaseHeldByABlockedAnnotatedCallAndForgetsItAfterRelease() throws Exception {
		long acquiredBefore = count(LockMetrics.ACQUIRE, "name", "outcome", "acquired");
		long heldBefore = count(LockMetrics.HELD, "name");
		long callsBefore = count("distlock.call", "distlock.name");
		long acquisitionsBefore = count("distlock.acquisition", "distlock.name", "distlock.outcome", "acquired");
		Instant before = Instant.now();
		CompletableFuture<String> call = holdInBackground("42");

		Response response = this.client.get("/actuator/locks");
		assertThat(response.status()).isEqualTo(200);
		Files.writeString(Path.of("target", "locks-endpoint-example.json"), response.body());
		assertThat(response.<String>read("$.clientId")).isEqualTo(this.lockService.clientId());
		assertThat(response.<Integer>read("$.waitingThreads")).isZero();
		List<Map<String, Object>> leases = response.read("$.leases");
		assertThat(leases).singleElement().satisfies(lease -> {
			assertThat(lease).containsEntry("key", "item:42")
				.containsEntry("name", "catalog-hold")
				.containsEntry("ownerThread", "blocked-caller")
				.containsEntry("holdCount", 1)
				.containsEntry("ttlMillis", 20000)
				.containsEntry("autoRenewed", true)
				.containsEntry("lost", false)
				.containsEntry("mode", "EXCLUSIVE")
				.containsKey("lastRenewal");
			assertThat((String) lease.get("owner")).startsWith(this.lockService.clientId() + ":");
			assertThat(Instant.parse((String) lease.get("heldSince"))).isBetween(before.minusSeconds(1), Instant.now());
			assertThat(((Number) lease.get("ttlRemainingMillis")).longValue()).isBetween(1L, 20_000L);
			assertThat(((Number) lease.get("fencingToken")).longValue())
				.isEqualTo(Long.parseLong(String.valueOf(redis.execute("HGET", "lock:{item:42}", "~t"))));
		});

		this.catalog.release();
		assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("42");
		Response after = this.client.get("/actuator/locks");
		assertThat(after.<List<?>>read("$.leases")).isEmpty();

		// in a full Boot application the call was also metered and observed
		assertThat(count(LockMetrics.ACQUIRE, "name", "outcome", "acquired")).isEqualTo(acquiredBefore + 1);
		assertThat(count(LockMetrics.HELD, "name")).isEqualTo(heldBefore + 1);
		assertThat(count("distlock.call", "distlock.name")).isEqualTo(callsBefore + 1);
		assertThat(count("distlock.acquisition", "distlock.name", "distlock.outcome", "acquired")).isEqualTo(acquisitionsBefore + 1);
	}

	/** The count of the timer {@code name} whose {@code nameTag} is "catalog-hold" (and with the extra tag, if given). */
	private long count(String name, String nameTag, String... tag) {
		Timer timer = this.meterRegistry.find(name).tag(nameTag, "catalog-hold")
			.tags((tag.length == 2) ? Tags.of(tag[0], tag[1]) : Tags.empty())
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

	@Test
	void theEndpointShowsRenewalsReentriesAndWaiters() throws Exception {
		ExecutorService others = Executors.newFixedThreadPool(2, runnable -> new Thread(runnable, "report-job"));
		try {
			CompletableFuture<String> call = holdInBackground("46");
			LockRequest report = LockRequest.of("report:2026-11-21", Duration.ofSeconds(20), Duration.ZERO).withName("daily-report");
			List<Lease> reportHolds = CompletableFuture
				.supplyAsync(() -> List.of(this.lockService.acquire(report), this.lockService.acquire(report)), others)
				.get(10, TimeUnit.SECONDS);
			CompletableFuture<Optional<Lease>> waiter = CompletableFuture.supplyAsync(() -> this.lockService
				.tryAcquire(LockRequest.of("item:46", Duration.ofSeconds(20), Duration.ofSeconds(20)).withName("catalog-hold")),
					others);
			// renewed every second (ttl 20 s × 0.05)
			await().atMost(DEADLINE).until(() -> this.lockService.waitingThreads() == 1
					&& this.lockService.activeLeases().stream().allMatch(lease -> lease.lastRenewal() != null));

			Response response = this.client.get("/actuator/locks");
			Files.writeString(Path.of("target", "locks-endpoint-full-example.json"), response.body());
			assertThat(response.<Integer>read("$.waitingThreads")).isEqualTo(1);
			assertThat(response.<List<String>>read("$.leases[*].key")).containsExactly("item:46", "report:2026-11-21");
			assertThat(response.<Integer>read("$.leases[1].holdCount")).isEqualTo(2);
			assertThat(response.<String>read("$.leases[1].ownerThread")).isEqualTo("report-job");
			assertThat(Instant.parse(response.read("$.leases[0].lastRenewal")))
				.isAfter(Instant.parse(response.read("$.leases[0].heldSince")));

			this.catalog.release();
			call.get(10, TimeUnit.SECONDS);
			waiter.get(10, TimeUnit.SECONDS).orElseThrow().release();
			reportHolds.forEach(Lease::release);
			assertThat(this.client.get("/actuator/locks").<List<?>>read("$.leases")).isEmpty();
		}
		finally {
			others.shutdownNow();
		}
	}

	@Test
	void theStoreViewListsTheLocksOfAnotherInstancePageByPage() throws Exception {
		try (LockTestSupport otherInstance = LockTestSupport.forServer(redis)) {
			RedisLockService other = otherInstance.service(RedisLockService.builder(otherInstance.connectionFactory())
				.holderApplication("warehouse")
				.holderInstance("pod-3"));
			List<Lease> held = new ArrayList<>();
			for (int i = 1; i <= 5; i++) {
				held.add(other.acquire("shelf:" + i, Duration.ofSeconds(30), Duration.ZERO));
			}
			held.add(other.acquire("shelf:1", Duration.ofSeconds(30), Duration.ZERO));
			assertThat(this.client.get("/actuator/locks").<List<?>>read("$.leases")).isEmpty();

			List<Map<String, Object>> listed = new ArrayList<>();
			String cursor = null;
			int pages = 0;
			do {
				Response page = this.client
					.get("/actuator/locks/all?size=2" + ((cursor != null) ? "&cursor=" + cursor : ""));
				assertThat(page.status()).isEqualTo(200);
				if (pages == 0) {
					Files.writeString(Path.of("target", "locks-all-example.json"), page.body());
				}
				List<Map<String, Object>> locks = page.read("$.locks");
				assertThat(locks).hasSizeLessThanOrEqualTo(4);
				listed.addAll(locks);
				cursor = page.read("$.nextCursor");
				pages++;
			}
			while (cursor != null && pages < 100);

			assertThat(cursor).isNull();
			// a SCAN step may give more than it was asked for (at most 4 here, the bound above), so 5 locks take at least
			// 2 pages; how many more is up to how Redis walks its table, which its random hash seed changes per start
			assertThat(pages).isGreaterThanOrEqualTo(2);
			assertThat(listed).extracting(lock -> lock.get("key"))
				.containsExactlyInAnyOrder("shelf:1", "shelf:2", "shelf:3", "shelf:4", "shelf:5");
			assertThat(listed).filteredOn(lock -> lock.get("key").equals("shelf:1")).singleElement().satisfies(lock -> {
				assertThat(lock).containsEntry("mode", "EXCLUSIVE").containsEntry("holds", 2).containsEntry("nodes", 1);
				assertThat(((Number) lock.get("fencingToken")).longValue()).isEqualTo(held.get(0).fencingToken());
				assertThat(((Number) lock.get("ttlRemainingMillis")).longValue()).isPositive();
				// the label the holder's lease stored: another instance's, in words an operator can act on
				assertThat(lock).containsEntry("holder", held.get(0).holder().toString());
				assertThat((String) lock.get("holder")).startsWith("warehouse@pod-3 thread \"");
			});
			held.forEach(Lease::release);
		}
		assertThat(this.client.get("/actuator/locks/all").<List<?>>read("$.locks")).isEmpty();
	}

	@Test
	void aSemaphoresHoldersAreListedWithModePermitsAndTheirAcquisitionsMetered() throws Exception {
		LockRequest partnerApi = LockRequest.of("partner-api", Duration.ofSeconds(30), Duration.ZERO)
			.withName("partner-api")
			.permits(3);
		try (LockTestSupport otherInstance = LockTestSupport.forServer(redis)) {
			// two permits held here by two owners, the third by another instance
			Lease first = this.lockService.acquireAsync(partnerApi, LockOwner.newOwner("first caller"))
				.get(10, TimeUnit.SECONDS);
			Lease second = this.lockService.acquireAsync(partnerApi, LockOwner.newOwner("second caller"))
				.get(10, TimeUnit.SECONDS);
			Lease third = otherInstance.service().acquire(partnerApi);
			assertThat(this.lockService.tryAcquire(partnerApi)).as("the three permits are held").isEmpty();

			Response response = this.client.get("/actuator/locks");
			List<Map<String, Object>> leases = response.read("$.leases[?(@.key == 'partner-api')]");
			assertThat(leases).hasSize(2).allSatisfy(lease -> assertThat(lease).containsEntry("mode", "PERMITS")
				.containsEntry("name", "partner-api")
				.containsEntry("holdCount", 1));
			assertThat(leases).extracting(lease -> lease.get("owner")).containsExactlyInAnyOrder(first.owner(),
					second.owner());

			Response all = this.client.get("/actuator/locks/all");
			List<Map<String, Object>> stored = all.read("$.locks[?(@.key == 'partner-api')]");
			assertThat(stored).singleElement()
				.satisfies(lock -> assertThat(lock).containsEntry("mode", "PERMITS").containsEntry("holds", 3));

			// the meters of a name count permits as they count leases: two acquired, two held here, one refused
			Timer acquired = this.meterRegistry.find(LockMetrics.ACQUIRE)
				.tags("name", "partner-api", "outcome", "acquired")
				.timer();
			assertThat(acquired).isNotNull();
			assertThat(acquired.count()).isEqualTo(2);
			Timer timedOut = this.meterRegistry.find(LockMetrics.ACQUIRE)
				.tags("name", "partner-api", "outcome", "timed-out")
				.timer();
			assertThat(timedOut.count()).isEqualTo(1);
			await().atMost(DEADLINE).until(() -> this.meterRegistry.find(LockServiceMetrics.LEASES_HELD)
				.tag("name", "partner-api")
				.gauge() != null && this.meterRegistry.get(LockServiceMetrics.LEASES_HELD)
				.tag("name", "partner-api")
				.gauge()
				.value() == 2);

			assertThat(this.meterRegistry.get(LockMetrics.PERMITS_LIMIT).tag("name", "partner-api").gauge().value())
				.isEqualTo(3);
			assertThat(this.meterRegistry.find(LockMetrics.PERMITS_LIMIT).tag("name", "catalog-hold").gauge()).isNull();

			first.release();
			second.release();
			third.release();
		}
		assertThat(this.client.get("/actuator/locks").<List<?>>read("$.leases")).isEmpty();
		assertThat(this.client.get("/actuator/locks/all").<List<?>>read("$.locks")).isEmpty();
		assertThat(this.meterRegistry.find(LockMetrics.HELD).tag("name", "partner-api").timer().count()).isEqualTo(2);
	}

	@Test
	void theStoreViewRefusesAnUnknownViewAPageSizeOutOfRangeAndAForeignCursor() throws Exception {
		assertThat(this.client.get("/actuator/locks/everything").status()).isEqualTo(400);
		assertThat(this.client.get("/actuator/locks/all?size=0").status()).isEqualTo(400);
		assertThat(this.client.get("/actuator/locks/all?size=1001").status()).isEqualTo(400);
		assertThat(this.client.get("/actuator/locks/all?cursor=not-a-cursor").status()).isEqualTo(400);
	}

	@Test
	void theForcedReleaseDoesNotExistUnlessEnabled() throws Exception {
		CompletableFuture<String> call = holdInBackground("43");
		Response delete = this.client.delete("/actuator/locks/item:43");
		assertThat(delete.status()).isIn(404, 405);
		assertThat(redis.execute("EXISTS", "lock:{item:43}")).isEqualTo(1L);
		this.catalog.release();
		call.get(10, TimeUnit.SECONDS);
	}

	@Test
	void healthGoesDownWhileRedisHangsWithALeaseHeldAndUpAgainOnceRenewalsSucceed() throws Exception {
		Response healthy = this.client.get("/actuator/health/locks");
		assertThat(healthy.status()).isEqualTo(200);
		assertThat(healthy.<String>read("$.status")).isEqualTo("UP");
		assertThat(healthy.<Integer>read("$.details.heldLeases")).isZero();

		CompletableFuture<String> call = holdInBackground("44");
		assertThat(this.client.get("/actuator/health/locks").<Integer>read("$.details.heldLeases")).isEqualTo(1);

		redis.pause();
		AtomicReference<Response> down = new AtomicReference<>();
		await().atMost(DEADLINE).pollInterval(Duration.ofMillis(100)).until(() -> {
			down.set(this.client.get("/actuator/health/locks"));
			return down.get().status() == 503;
		});
		Files.writeString(Path.of("target", "locks-health-down-example.json"), down.get().body());
		assertThat(down.get().<String>read("$.status")).isEqualTo("DOWN");
		assertThat(down.get().<Integer>read("$.details.leasesFailingRenewal")).isEqualTo(1);
		assertThat(down.get().<Integer>read("$.details.heldLeases")).isEqualTo(1);
		assertThat(Instant.parse(down.get().read("$.details.renewalsFailingSince"))).isBefore(Instant.now());
		assertThat(down.get().<String>read("$.details.lastRenewalError")).isNotBlank();

		redis.resume();
		await().atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
			.until(() -> this.client.get("/actuator/health/locks").status() == 200);
		Response up = this.client.get("/actuator/health/locks");
		assertThat(up.<String>read("$.status")).isEqualTo("UP");
		assertThat(up.<Integer>read("$.details.heldLeases")).isEqualTo(1);

		this.catalog.release();
		assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo("44");
	}

	@Test
	void aLeaseDeletedInRedisIsListedAsLostUntilItsHolderReleasesIt() throws Exception {
		CompletableFuture<String> call = holdInBackground("47");
		long token = Long.parseLong(String.valueOf(redis.execute("HGET", "lock:{item:47}", "~t")));
		assertThat(this.client.get("/actuator/locks").<List<Boolean>>read("$.leases[*].lost")).containsExactly(false);

		// behind the holder's back; its watchdog (renewing every second) finds the lease gone
		redis.execute("DEL", "lock:{item:47}");
		AtomicReference<Response> lost = new AtomicReference<>();
		await().atMost(DEADLINE).pollInterval(Duration.ofMillis(100)).until(() -> {
			lost.set(this.client.get("/actuator/locks"));
			return lost.get().<List<Boolean>>read("$.leases[*].lost").contains(true);
		});
		Files.writeString(Path.of("target", "locks-endpoint-lost-example.json"), lost.get().body());
		assertThat(lost.get().<List<Map<String, Object>>>read("$.leases")).singleElement().satisfies(lease -> {
			assertThat(lease).containsEntry("key", "item:47")
				.containsEntry("name", "catalog-hold")
				.containsEntry("ownerThread", "blocked-caller")
				.containsEntry("holdCount", 1)
				.containsEntry("ttlRemainingMillis", 0)
				.containsEntry("lost", true);
			assertThat(((Number) lease.get("fencingToken")).longValue()).isEqualTo(token);
		});
		// the holder has not returned yet: it runs without its lock, which health shows without going down
		assertThat(call).isNotDone();
		Response health = this.client.get("/actuator/health/locks");
		assertThat(health.status()).isEqualTo(200);
		assertThat(health.<String>read("$.status")).isEqualTo("UP");
		assertThat(health.<Integer>read("$.details.heldLeases")).isZero();
		assertThat(health.<Integer>read("$.details.lostLeases")).isEqualTo(1);

		this.catalog.release();
		assertThat(call).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LockLostException.class);
		assertThat(this.client.get("/actuator/locks").<List<?>>read("$.leases")).isEmpty();
		assertThat(this.client.get("/actuator/health/locks").<Integer>read("$.details.lostLeases")).isZero();
	}

	@Test
	void healthGoesDownWhileRedisIsStoppedWithALeaseHeldAndUpAgainAfterItReturns() throws Exception {
		CompletableFuture<String> call = holdInBackground("48");
		Response healthy = this.client.get("/actuator/health/locks");
		assertThat(healthy.<String>read("$.status")).isEqualTo("UP");
		assertThat(healthy.<Integer>read("$.details.heldLeases")).isEqualTo(1);

		redis.stop();
		await().atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
			.until(() -> this.client.get("/actuator/health/locks").status() == 503);
		Response down = this.client.get("/actuator/health");
		assertThat(down.status()).isEqualTo(503);
		assertThat(down.<String>read("$.status")).isEqualTo("DOWN");
		assertThat(down.<String>read("$.components.locks.status")).isEqualTo("DOWN");
		assertThat(down.<Integer>read("$.components.locks.details.heldLeases")).isEqualTo(1);
		assertThat(down.<Integer>read("$.components.locks.details.leasesFailingRenewal")).isEqualTo(1);
		assertThat(Instant.parse(down.read("$.components.locks.details.renewalsFailingSince"))).isBefore(Instant.now());
		assertThat(down.<String>read("$.components.locks.details.lastRenewalError")).isNotBlank();
		// the lease is not known to be lost while Redis cannot be asked
		assertThat(this.client.get("/actuator/locks").<List<Boolean>>read("$.leases[*].lost")).containsExactly(false);

		// back on the same port, without its data: the next renewal reaches Redis and finds the lease gone (or, if the
		// client reconnects only after the lease time, the watchdog gives the lease up by its clock)
		redis.restart();
		await().atMost(RESTART_DEADLINE).pollInterval(Duration.ofMillis(200))
			.until(() -> this.client.get("/actuator/health").status() == 200);
		Response up = this.client.get("/actuator/health");
		Files.writeString(Path.of("target", "locks-health-after-restart-example.json"), up.body());
		assertThat(up.<String>read("$.components.locks.status")).isEqualTo("UP");
		assertThat(up.<Map<String, Object>>read("$.components.locks.details")).containsEntry("heldLeases", 0)
			.containsEntry("lostLeases", 1)
			.doesNotContainKeys("leasesFailingRenewal", "renewalsFailingSince", "lastRenewalError");
		assertThat(this.client.get("/actuator/locks").<List<Boolean>>read("$.leases[*].lost")).containsExactly(true);

		this.catalog.release();
		assertThat(call).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LockLostException.class);
		assertThat(this.client.get("/actuator/health/locks").<Integer>read("$.details.lostLeases")).isZero();

		// renewals succeed again: a new lease of the same key is renewed by the watchdog, and health stays UP
		Lease again = this.lockService
			.acquire(LockRequest.of("item:48", Duration.ofSeconds(20), Duration.ZERO).withName("catalog-hold"));
		try {
			await().atMost(DEADLINE).until(() -> this.lockService.activeLeases().stream()
				.anyMatch(lease -> lease.key().equals("item:48") && lease.lastRenewal() != null));
			Response renewed = this.client.get("/actuator/health/locks");
			assertThat(renewed.status()).isEqualTo(200);
			assertThat(renewed.<Integer>read("$.details.heldLeases")).isEqualTo(1);
			assertThat(renewed.<Integer>read("$.details.lostLeases")).isZero();
		}
		finally {
			again.release();
		}
	}

}
