package dev.distlock.sample.inventory.demo;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo end to end, reduced: a private Redis and two app instances as separate JVMs (started from this test's
 * class path), concurrent purchases in every mode, the table, the exit code, and nothing left running afterwards.
 */
class InventoryDemoIntegrationTests {

	@Test
	void reducedDemoPassesAndLeavesNothingRunning() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		List<ProcessHandle> before = ProcessHandle.current().descendants().toList();

		int exitCode = InventoryDemo.run(new String[] { "--quick", "--stock", "50", "--attempts", "200", "--clients", "12",
				"--delay", "5ms" }, print(out), print(err));

		String output = out.toString(StandardCharsets.UTF_8);
		assertThat(exitCode).as(output + err.toString(StandardCharsets.UTF_8)).isZero();
		assertThat(output).contains("mode", "attempts", "sold", "remaining", "oversold", "p50 ms", "p99 ms")
			.containsPattern("(?m)^distributed +200 +50 +0 +0 +0 ")
			.contains("PASS: the distributed lock sold exactly 50 and never oversold.");
		assertThat(output.lines().filter((line) -> line.matches("^(none|local|distributed) .*"))).hasSize(3);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("distributed  100%");
		assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
			.filter((process) -> !before.contains(process))).as("processes left running").isEmpty();
	}

	@Test
	void helpAndBadOptionsDoNotStartAnything() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();

		assertThat(InventoryDemo.run(new String[] { "--help" }, print(out), print(err))).isZero();
		assertThat(out.toString(StandardCharsets.UTF_8)).contains("--quick", "--redis HOST:PORT");
		assertThat(InventoryDemo.run(new String[] { "--clients", "none" }, print(out), print(err))).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("Option --clients needs a whole number");
		assertThat(InventoryDemo.run(new String[] { "--quick", "--instances", "1" }, print(out), print(err))).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("Option --instances needs a whole number of at least 2");
	}

	private static PrintStream print(ByteArrayOutputStream bytes) {
		return new PrintStream(bytes, true, StandardCharsets.UTF_8);
	}

}
