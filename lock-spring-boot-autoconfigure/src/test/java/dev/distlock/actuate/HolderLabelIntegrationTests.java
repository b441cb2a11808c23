package dev.distlock.actuate;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.actuate.ActuatorTestApp.Client;
import dev.distlock.actuate.ActuatorTestApp.Response;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.observability.Catalog;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
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
import static org.awaitility.Awaitility.await;

/**
 * Issue 29: a lease's owner id (and with it the instance's client id) reaches no log line, no
 * {@link LockLostException} message and no forced-release audit; they name the holder by its label instead,
 * {@code <application>@<instance> thread "<name>"}, with the application from {@code spring.application.name} and
 * the instance from {@code distlock.holder.instance}. The lease is lost the way operators lose leases: a forced
 * release through the actuator, which the holder's watchdog then finds.
 */
@SpringBootTest(classes = { ActuatorTestApp.class, HolderLabelIntegrationTests.Recorder.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=locks", "spring.data.redis.timeout=2s",
				"spring.application.name=inventory", "distlock.holder.instance=pod-7", "distlock.renewal-ratio=0.05",
				"distlock.actuator.force-release.enabled=true" })
@DirtiesContext
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HolderLabelIntegrationTests {

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

	private final ExecutorService executor = Executors
		.newSingleThreadExecutor((runnable) -> new Thread(runnable, "catalog-caller"));

	@AfterEach
	void tearDown() throws InterruptedException {
		this.catalog.release();
		this.executor.shutdown();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
	}

	@Test
	void theLostLeaseWarningTheLockLostExceptionAndTheForcedReleaseAuditNameTheHolderNotItsOwnerId(
			CapturedOutput output) throws Exception {
		this.catalog.arm();
		CompletableFuture<String> call = CompletableFuture.supplyAsync(() -> {
			try {
				return this.catalog.hold("7");
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		}, this.executor);
		assertThat(this.catalog.awaitEntered(10)).isTrue();
		// what Redis has: the lease's owner id and token, read as any client of Redis can read them
		List<String> fields = hashFields("lock:{item:7}");
		String ownerId = fields.stream().filter((field) -> !field.startsWith("~")).findFirst().orElseThrow();
		String token = String.valueOf(redis.execute("HGET", "lock:{item:7}", "~t"));
		String clientId = this.lockService.clientId();
		assertThat(ownerId).startsWith(clientId + ":");
		String label = "inventory@pod-7 thread \"catalog-caller\"";

		Response released = new Client(this.port).delete("/actuator/locks/item:7");
		assertThat(released.<Boolean>read("$.released")).isTrue();
		await().atMost(DEADLINE).until(() -> !this.recorder.lost.isEmpty());
		this.catalog.release();
		Throwable failure = failureOf(call);

		// the event and the exception: the holder by its label
		LockLostEvent event = this.recorder.lost.get(0);
		assertThat(event.holder()).hasToString(label);
		assertThat(event.owner()).as("the owner id stays available to code").isEqualTo(ownerId);
		assertThat(failure).isInstanceOf(LockLostException.class)
			.hasMessage("Lock 'item:7' (fencing token " + token + ") was lost while held by " + label + ": "
					+ LockLostEvent.Detection.RENEWAL_FOUND_GONE.description())
			.hasMessageNotContaining(ownerId)
			.hasMessageNotContaining(clientId);
		// the log: the engine's WARN and the actuator's name the holder by the label the lease stored; neither the owner id nor the
		// client id is anywhere in the output (the engine's thread names carry six of the client id's 22 characters)
		assertThat(output).contains("Lock 'item:7' (fencing token " + token + ") held by " + label + " was lost: ")
			.contains("Force-released lock 'item:7' through the actuator, requested by anonymous: its holder " + label
					+ " (1 hold(s), fencing token " + token + ") will find its lease lost")
			.doesNotContain(ownerId)
			.doesNotContain(ownerId.substring(clientId.length() + 1))
			.doesNotContain(clientId);
		// the audit event: the owner id masked
		assertThat(this.recorder.audits).singleElement().satisfies((audit) -> {
			assertThat(audit.getAuditEvent().getData()).containsEntry("formerOwner", LocksEndpoint.MASK)
				.containsEntry("formerOwners", List.of(LocksEndpoint.MASK))
				.containsEntry("formerHolders", 1)
				.containsEntry("formerHolderLabels", List.of(label));
			assertThat(audit.getAuditEvent().getData().toString()).doesNotContain(ownerId).doesNotContain(clientId);
		});
	}

	private static Throwable failureOf(CompletableFuture<String> call) throws Exception {
		try {
			call.get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
		throw new AssertionError("The call did not fail: its lease was lost");
	}

	private static List<String> hashFields(String redisKey) {
		Object reply = redis.execute("HKEYS", redisKey);
		assertThat(reply).isInstanceOf(List.class);
		return ((List<?>) reply).stream().map(String::valueOf).toList();
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
