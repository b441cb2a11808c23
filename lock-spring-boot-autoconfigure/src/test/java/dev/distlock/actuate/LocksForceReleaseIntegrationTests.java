package dev.distlock.actuate;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.actuate.ActuatorTestApp.Client;
import dev.distlock.actuate.ActuatorTestApp.Response;
import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.observability.Catalog;
import dev.distlock.redis.RedisLockService;
import dev.distlock.redis.internal.wait.WaiterProbe;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.audit.listener.AuditApplicationEvent;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * With {@code distlock.actuator.force-release.enabled=true} the {@code locks} endpoint deletes a held lease, wakes and
 * audits; with {@code distlock.health.renewal-failure-status=out-of-service} failing renewals take the instance out of
 * service instead of reporting it down.
 */
@SpringBootTest(classes = { ActuatorTestApp.class, LocksForceReleaseIntegrationTests.Recorder.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=locks,health",
				// owner ids and fencing tokens to anonymous callers: these tests read them (masking is tested apart)
				"management.endpoint.locks.show-values=always",
				"management.endpoint.health.show-details=always", "spring.data.redis.timeout=2s",
				"distlock.renewal-ratio=0.05", "distlock.actuator.force-release.enabled=true",
				"distlock.health.renewal-failure-status=out-of-service" })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocksForceReleaseIntegrationTests {

	private static final Duration DEADLINE = Duration.ofSeconds(15);

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
	private Recorder recorder;

	private Client client;

	private final ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> new Thread(runnable, "blocked-caller"));

	@BeforeEach
	void setUp() {
		this.client = new Client(this.port);
		this.catalog.arm();
		// the first commands of a fresh connection can be slow on a loaded machine: not what these tests are about
		await().atMost(DEADLINE).ignoreExceptions().until(() -> {
			this.lockService.acquire("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
			return true;
		});
		this.recorder.audits.clear();
		this.recorder.lost.clear();
	}

	@AfterEach
	void tearDown() throws InterruptedException {
		this.catalog.release();
		this.executor.shutdown();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
		if (redis.isPaused()) {
			redis.resume();
		}
	}

	@Test
	void aForcedReleaseDeletesTheLeaseAuditsItAndTheHolderFindsItLost(CapturedOutput output) throws Exception {
		CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
			try {
				return this.catalog.hold("45");
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		}, this.executor);
		assertThat(this.catalog.awaitEntered(10)).isTrue();
		String token = String.valueOf(redis.execute("HGET", "lock:{item:45}", "~t"));

		Response response = this.client.delete("/actuator/locks/item:45");
		assertThat(response.status()).isEqualTo(200);
		Files.writeString(Files.createDirectories(Path.of("target")).resolve("locks-force-release-example.json"),
				response.body());
		assertThat(response.<String>read("$.key")).isEqualTo("item:45");
		assertThat(response.<Boolean>read("$.released")).isTrue();
		String owner = response.read("$.formerOwner");
		assertThat(owner).startsWith(this.lockService.clientId() + ":");
		assertThat(redis.execute("EXISTS", "lock:{item:45}")).isEqualTo(0L);
		assertThat(response.<Integer>read("$.holdCount")).isEqualTo(1);
		assertThat(String.valueOf(response.<Object>read("$.fencingToken"))).isEqualTo(token);

		assertThat(output).contains("Force-released lock 'item:45' through the actuator, requested by anonymous")
			.contains("fencing token " + token);
		assertThat(this.recorder.audits).singleElement().satisfies(audit -> {
			assertThat(audit.getAuditEvent().getType()).isEqualTo(ForceReleaseLocksEndpoint.AUDIT_EVENT_TYPE);
			assertThat(audit.getAuditEvent().getPrincipal()).isEqualTo("anonymous");
			assertThat(audit.getAuditEvent().getData()).containsEntry("key", "item:45").containsEntry("released", true);
		});

		// the holder's watchdog finds the lease gone at its next renewal (every second); the call reports the loss
		await().atMost(DEADLINE).until(() -> !this.recorder.lost.isEmpty());
		assertThat(this.recorder.lost).singleElement().satisfies(event -> {
			assertThat(event.key()).isEqualTo("item:45");
			assertThat(event.name()).isEqualTo("catalog-hold");
			// the owner that lost it: the blocked call's, as Redis had it before the forced release
			assertThat(event.owner()).isEqualTo(owner);
			assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
			assertThat(Long.toString(event.fencingToken())).isEqualTo(token);
		});
		this.catalog.release();
		assertThat(call).failsWithin(Duration.ofSeconds(10)).withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LockLostException.class);

		// a free key: nothing to release
		Response free = this.client.delete("/actuator/locks/item:45");
		assertThat(free.status()).isEqualTo(200);
		assertThat(free.<Boolean>read("$.released")).isFalse();
	}

	@Test
	void keysWithSlashesCanBeForceReleased() throws Exception {
		Lease held = CompletableFuture
			.supplyAsync(() -> this.lockService.acquire("orders/eu/42", Duration.ofSeconds(20), Duration.ZERO), this.executor)
			.get(10, TimeUnit.SECONDS);
		Response response = this.client.delete("/actuator/locks/orders/eu/42");
		assertThat(response.status()).isEqualTo(200);
		assertThat(response.<String>read("$.key")).isEqualTo("orders/eu/42");
		assertThat(response.<Boolean>read("$.released")).isTrue();
		assertThat(String.valueOf(response.<Object>read("$.fencingToken"))).isEqualTo(Long.toString(held.fencingToken()));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(held::release);
	}

	@Test
	void aKeyWithLineBreaksCannotForgeALogLine(CapturedOutput output) throws Exception {
		// issue 29: DELETE /actuator/locks/a%0D%0AWARN%20forged used to write a line of its own, "WARN forged ..."
		String key = "a\r\nWARN forged";
		CompletableFuture
			.supplyAsync(() -> this.lockService.acquire(key, Duration.ofSeconds(20), Duration.ZERO), this.executor)
			.get(10, TimeUnit.SECONDS);

		Response released = this.client.delete("/actuator/locks/a%0D%0AWARN%20forged");
		Response free = this.client.delete("/actuator/locks/a%0D%0AWARN%20forged");

		assertThat(released.status()).isEqualTo(200);
		assertThat(released.<Boolean>read("$.released")).isTrue();
		// the JSON and the audit event carry the key as it is; only the log line escapes it
		assertThat(released.<String>read("$.key")).isEqualTo(key);
		assertThat(free.<Boolean>read("$.released")).isFalse();
		assertThat(this.recorder.audits).hasSize(2)
			.allSatisfy(audit -> assertThat(audit.getAuditEvent().getData()).containsEntry("key", key));
		// the holder's watchdog finds the lease gone at its next renewal: the engine's lost-lease WARN names the key too
		await().atMost(DEADLINE).until(() -> !this.recorder.lost.isEmpty());
		assertThat(this.recorder.lost).singleElement().satisfies(event -> assertThat(event.key()).isEqualTo(key));
		assertThat(output.getAll().lines()).noneMatch(line -> line.startsWith("WARN forged"));
		assertThat(output).contains("Force-released lock 'a\\r\\nWARN forged' through the actuator")
			.contains("Force-release of lock 'a\\r\\nWARN forged' requested through the actuator")
			.contains("Lock 'a\\r\\nWARN forged' (fencing token");
	}

	@Test
	void aReadLockOfTwoReadersIsForceReleasedReportedWithBothAndAudited(CapturedOutput output) throws Exception {
		Lease first = holdOnThreadOfItsOwn(LockRequest.of("report", Duration.ofSeconds(60), Duration.ZERO).read());
		Lease second = holdOnThreadOfItsOwn(LockRequest.of("report", Duration.ofSeconds(60), Duration.ZERO).read());

		Response response = this.client.delete("/actuator/locks/report");

		assertThat(response.status()).isEqualTo(200);
		assertThat(response.<Boolean>read("$.released")).isTrue();
		assertThat(response.<Integer>read("$.holdCount")).isEqualTo(2);
		assertThat(response.<List<String>>read("$.formerOwners")).containsExactlyInAnyOrder(first.owner(),
				second.owner());
		assertThat(response.<String>read("$.formerOwner")).isIn(first.owner(), second.owner());
		assertThat(String.valueOf(response.<Object>read("$.fencingToken")))
			.isEqualTo(Long.toString(first.fencingToken()));
		assertThat(redis.execute("EXISTS", "lock:{report}")).isEqualTo(0L);
		assertThat(response.<List<String>>read("$.formerHolders"))
			.containsExactlyInAnyOrder(first.holder().toString(), second.holder().toString());
		// the log and the audit name the holders by their labels; their owner ids stay in the response (issue 29)
		assertThat(output).contains("Force-released lock 'report' through the actuator, requested by anonymous: its 2 "
				+ "holders ")
			.contains(" (2 hold(s), fencing token " + first.fencingToken() + ") will find their leases lost")
			.contains(first.holder().toString())
			.contains(second.holder().toString())
			.doesNotContain(first.owner())
			.doesNotContain(second.owner());
		assertThat(this.recorder.audits).singleElement()
			.satisfies(audit -> assertThat(audit.getAuditEvent().getData()).containsEntry("key", "report")
				.containsEntry("released", true)
				.containsEntry("holdCount", 2L)
				.containsEntry("formerHolders", 2)
				.containsEntry("formerOwners", List.of(LocksEndpoint.MASK, LocksEndpoint.MASK))
				.hasEntrySatisfying("formerHolderLabels", (labels) -> assertThat((List<Object>) labels)
					.containsExactlyInAnyOrder(first.holder().toString(), second.holder().toString())));
		assertThatExceptionOfType(LockLostException.class).isThrownBy(first::release);
		assertThatExceptionOfType(LockLostException.class).isThrownBy(second::release);
	}

	@Test
	void aForceReleasedWriteLockIsReportedWithItsWriterAndEveryWaitingReaderGetsIn() throws Exception {
		Lease writer = holdOnThreadOfItsOwn(LockRequest.of("ledger", Duration.ofSeconds(60), Duration.ZERO).write());
		// the readers' wait is long: one that got in before it ended was woken by the forced release
		Duration wait = Duration.ofSeconds(20);
		List<Thread> threads = new CopyOnWriteArrayList<>();
		List<CompletableFuture<Long>> readers = List.of(waitToRead("ledger", wait, threads),
				waitToRead("ledger", wait, threads));
		await().atMost(DEADLINE).until(() -> threads.size() == 2);
		for (Thread thread : threads) {
			await().atMost(DEADLINE).until(() -> WaiterProbe.parkedBetweenAttempts(thread));
		}

		Response response = this.client.delete("/actuator/locks/ledger");

		assertThat(response.status()).isEqualTo(200);
		assertThat(response.<String>read("$.formerOwner")).isEqualTo(writer.owner());
		assertThat(response.<List<String>>read("$.formerOwners")).containsExactly(writer.owner());
		assertThat(response.<Integer>read("$.holdCount")).isEqualTo(1);
		assertThat(String.valueOf(response.<Object>read("$.fencingToken")))
			.isEqualTo(Long.toString(writer.fencingToken()));
		assertThat(this.recorder.audits).singleElement()
			.satisfies(audit -> assertThat(audit.getAuditEvent().getData()).containsEntry("key", "ledger")
				.containsEntry("formerOwner", LocksEndpoint.MASK)
				.containsEntry("formerHolders", 1));
		for (CompletableFuture<Long> reader : readers) {
			assertThat(Duration.ofNanos(reader.get(wait.toSeconds() + 15, TimeUnit.SECONDS))).isLessThan(wait);
		}
		assertThatExceptionOfType(LockLostException.class).isThrownBy(writer::release);
	}

	/** A lease held by an owner of its own: the thread that acquired it, which ends at once. */
	private Lease holdOnThreadOfItsOwn(LockRequest request) throws Exception {
		return CompletableFuture.supplyAsync(() -> this.lockService.tryAcquire(request).orElseThrow(),
				runnable -> new Thread(runnable, "holder").start())
			.get(10, TimeUnit.SECONDS);
	}

	/** A reader that waits on a thread of its own; its future has how long it waited, once it got the lock. */
	private CompletableFuture<Long> waitToRead(String key, Duration wait, List<Thread> threads) {
		return CompletableFuture.supplyAsync(() -> {
			threads.add(Thread.currentThread());
			long start = System.nanoTime();
			Lease lease = this.lockService.tryAcquire(LockRequest.of(key, Duration.ofSeconds(60), wait).read())
				.orElseThrow(() -> new IllegalStateException("no read lock within " + wait));
			long waited = System.nanoTime() - start;
			lease.release();
			return waited;
		}, runnable -> new Thread(runnable, "reader").start());
	}

	@Test
	void failingRenewalsTakeTheInstanceOutOfServiceWhenSoConfigured() throws Exception {
		Lease held = this.lockService.acquire("report", Duration.ofSeconds(20), Duration.ZERO);
		try {
			redis.pause();
			AtomicReference<Response> health = new AtomicReference<>();
			await().atMost(DEADLINE).pollInterval(Duration.ofMillis(100)).until(() -> {
				health.set(this.client.get("/actuator/health/locks"));
				return health.get().status() == 503;
			});
			assertThat(health.get().<String>read("$.status")).isEqualTo("OUT_OF_SERVICE");
			redis.resume();
			await().atMost(DEADLINE).pollInterval(Duration.ofMillis(100))
				.until(() -> this.client.get("/actuator/health/locks").status() == 200);
		}
		finally {
			if (redis.isPaused()) {
				redis.resume();
			}
			held.release();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Recorder {

		final List<AuditApplicationEvent> audits = new CopyOnWriteArrayList<>();

		final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

		@EventListener
		void audit(AuditApplicationEvent event) {
			this.audits.add(event);
		}

		@EventListener
		void lost(LockLostEvent event) {
			this.lost.add(event);
		}

	}

}
