package dev.distlock.sample.inventory;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.sample.inventory.ConcurrentSale.Result;
import dev.distlock.test.redis.RedisServer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.awaitility.Awaitility.await;

/**
 * The application as Spring Boot's ahead-of-time processing left it ({@code process-aot}, in the prepare-package
 * phase), started in a JVM of its own with {@code -Dspring.aot.enabled=true}: its bean definitions come from the
 * generated code, and its configuration classes and conditions are not read again. Against a redis-server of its own
 * and on a free port, its {@code @DistributedLock} purchases must sell exactly the stock under concurrent HTTP
 * clients, with one lease per sale; the same load without the lock oversells, so the assertion is not vacuous.
 * <p>
 * Runs in the integration-test phase (the {@code aot-application} execution of the module's pom), not with the other
 * tests: it needs what process-aot generates, and the class path that pom writes.
 */
class AotInventoryIntegrationTests {

	private static final ConcurrentSale SALE = new ConcurrentSale(40, 160, 16);

	/** Generous: the application starts on a shared, busy machine. */
	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private static final Duration STOP_GRACE = Duration.ofSeconds(30);

	/** Small heap and the client compiler, as the demo's instances: CI shares two cores. */
	private static final List<String> JVM_OPTIONS = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dfile.encoding=UTF-8");

	/** target/classes, with what process-aot generated. */
	private static Path classes;

	private static Path log;

	private static RedisServer redis;

	private static Process application;

	private static InventoryHttp http;

	@BeforeAll
	static void startTheAotProcessedApplication() throws IOException {
		assumeFalse("test".equals(System.getProperty("distlock.aot.phase")),
				"Runs in the aot-application execution (integration-test phase), after process-aot");
		classes = Path.of(requiredProperty("distlock.aot.classes"));
		log = classes.resolveSibling("aot-application").resolve("application.log");
		redis = RedisServer.start();
		int port = freePort();
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(JVM_OPTIONS);
		command.add("-Dspring.aot.enabled=true");
		command.add("-cp");
		command.add(classes + File.pathSeparator
				+ Files.readString(Path.of(requiredProperty("distlock.aot.classpath-file")), StandardCharsets.UTF_8).trim());
		command.add(InventoryApplication.class.getName());
		command.addAll(List.of("--server.port=" + port, "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--inventory.instance-id=aot",
				// a wide window between read and write, so that unlocked purchases overlap on any machine
				"--inventory.processing-delay=10ms",
				// generous: all 16 clients' purchases may queue for one SKU's lock on a loaded machine
				"--inventory.lock.wait-time=60s", "--spring.main.banner-mode=off"));
		Files.createDirectories(log.getParent());
		application = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		Runtime.getRuntime().addShutdownHook(new Thread(application::destroyForcibly, "aot-application-reaper"));
		http = new InventoryHttp(port);
		try {
			await("the AOT-processed application's health UP").atMost(START_TIMEOUT)
				.pollInterval(Duration.ofMillis(200))
				.until(AotInventoryIntegrationTests::healthy);
		}
		catch (ConditionTimeoutException ex) {
			throw new AssertionError("The AOT-processed application was not UP within " + START_TIMEOUT + "; its log ("
					+ log + "):" + System.lineSeparator() + log(), ex);
		}
	}

	@AfterAll
	static void stop() throws InterruptedException {
		try {
			if (application != null && application.isAlive()) {
				application.destroy();
				if (!application.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
					application.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
				}
			}
		}
		finally {
			if (redis != null) {
				redis.close();
			}
		}
	}

	@Test
	void startedFromTheCodeThatProcessAotGenerated() {
		assertThat(classes.resolve(InventoryApplication.class.getName().replace('.', '/')
				+ "__ApplicationContextInitializer.class")).isRegularFile();
		// Spring Boot says so only when it runs the generated initializer (without it, AOT mode fails the start)
		assertThat(log()).contains("Starting AOT-processed " + InventoryApplication.class.getSimpleName());
	}

	@Test
	void theDistributedLockSellsExactlyTheStock() {
		Result result = SALE.sell("distributed", List.of(http));

		SALE.assertNeverOversold(result);
		assertThat(result.receiptsByInstance()).containsOnlyKeys("aot");
		assertThat(result.distinctTokens()).as("one lease per purchase").isEqualTo(SALE.stock());
	}

	@Test
	void withoutALockTheSameLoadOversells() {
		Result result = SALE.sell("none", List.of(http));

		assertThat(result.oversold()).as("oversold units").isPositive();
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> SALE.assertNeverOversold(result));
	}

	@Test
	void theLocksEndpointAnswers() {
		assertThat(http.get("/actuator/locks").status()).isEqualTo(200);
	}

	private static boolean healthy() {
		if (!application.isAlive()) {
			throw new AssertionError("The AOT-processed application exited with code " + application.exitValue()
					+ " while starting; its log (" + log + "):" + System.lineSeparator() + log());
		}
		try {
			InventoryHttp.Response health = http.get("/actuator/health");
			return health.status() == 200 && health.body().contains("\"UP\"");
		}
		catch (UncheckedIOException ex) {
			return false; // not listening yet
		}
	}

	private static String log() {
		try {
			return Files.readString(log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** A port nothing listens on now, as {@link RedisServer} chooses its own. */
	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(RedisServer.HOST))) {
			return socket.getLocalPort();
		}
	}

	private static String requiredProperty(String name) {
		String value = System.getProperty(name);
		if (value == null) {
			throw new IllegalStateException("System property " + name + " is not set: run this test with Maven, "
					+ "./mvnw -pl sample-inventory-app -am verify (execution aot-application, after process-aot)");
		}
		return value;
	}

}
