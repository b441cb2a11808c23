package dev.distlock.sample.inventory.demo;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo end to end, reduced: a private Redis and two app instances as separate JVMs (started from this test's
 * class path), concurrent purchases in every mode, the table, the exit code, and nothing left running afterwards.
 */
class InventoryDemoIntegrationTests {

	/** The table's columns in order; {@code p50 ms} and {@code p99 ms} are one column each. */
	private static final List<String> COLUMNS = List.of("mode", "attempts", "sold", "remaining", "oversold",
			"orders>stock", "busy(409)", "errors", "req/s", "p50 ms", "p99 ms");

	@Test
	void reducedDemoPassesAndLeavesNothingRunning() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		List<ProcessHandle> before = ProcessHandle.current().descendants().toList();

		int exitCode = InventoryDemo.run(new String[] { "--quick", "--stock", "50", "--attempts", "200", "--clients", "12",
				"--delay", "5ms" }, print(out), print(err));

		String output = out.toString(StandardCharsets.UTF_8);
		assertThat(exitCode).as(output + err.toString(StandardCharsets.UTF_8)).isZero();
		assertThat(output).containsPattern("(?m)^" + String.join(" +", COLUMNS.stream().map(Pattern::quote).toList()) + "$")
			.contains("PASS: the distributed lock sold exactly 50 and never oversold.");
		assertThat(output.lines().filter((line) -> line.matches("^(none|local|distributed) .*"))).hasSize(3);
		Map<String, String> distributed = row(output, "distributed");
		assertThat(distributed).containsEntry("attempts", "200").containsEntry("sold", "50")
			.containsEntry("remaining", "0").containsEntry("oversold", "0").containsEntry("orders>stock", "0")
			.containsEntry("errors", "0");
		assertThat(Double.parseDouble(distributed.get("req/s"))).as("throughput").isPositive();
		double p50 = Double.parseDouble(distributed.get("p50 ms"));
		assertThat(p50).as("p50").isPositive();
		assertThat(Double.parseDouble(distributed.get("p99 ms"))).as("p99").isGreaterThanOrEqualTo(p50);
		for (String mode : List.of("none", "local")) {
			Map<String, String> row = row(output, mode);
			assertThat(Long.parseLong(row.get("orders>stock"))).as(mode + " orders>stock").isNotNegative();
			assertThat(Double.parseDouble(row.get("req/s"))).as(mode + " req/s").isPositive();
		}
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("distributed  100%");
		assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
			.filter((process) -> !before.contains(process))).as("processes left running").isEmpty();
	}

	/**
	 * {@code --redlock}: 5 more private Redis servers and two instances locking with Redlock over them; the redlock row
	 * must be as exact as the distributed one, and every server and instance is gone afterwards.
	 */
	@Test
	void reducedRedlockDemoPassesAndLeavesNothingRunning() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();
		List<ProcessHandle> before = ProcessHandle.current().descendants().toList();

		int exitCode = InventoryDemo.run(new String[] { "--quick", "--redlock", "--stock", "30", "--attempts", "100",
				"--clients", "8", "--delay", "5ms" }, print(out), print(err));

		String output = out.toString(StandardCharsets.UTF_8);
		assertThat(exitCode).as(output + err.toString(StandardCharsets.UTF_8)).isZero();
		assertThat(output).contains("  Redlock:    5 more private redis-server")
			.contains("PASS: the distributed lock, on one Redis and on Redlock, sold exactly 30 each time and never oversold.");
		assertThat(output.lines().filter((line) -> line.matches("^(none|local|distributed|redlock) .*"))).hasSize(4);
		for (String mode : List.of("distributed", "redlock")) {
			assertThat(row(output, mode)).as(mode).containsEntry("attempts", "100").containsEntry("sold", "30")
				.containsEntry("remaining", "0").containsEntry("oversold", "0").containsEntry("orders>stock", "0")
				.containsEntry("errors", "0");
		}
		assertThat(output).containsPattern("started: .*redlock-1 .*redlock-2 ");
		assertThat(err.toString(StandardCharsets.UTF_8)).containsPattern("(?m)^  redlock +100%");
		assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
			.filter((process) -> !before.contains(process))).as("processes left running").isEmpty();
	}

	@Test
	void helpAndBadOptionsDoNotStartAnything() {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		ByteArrayOutputStream err = new ByteArrayOutputStream();

		assertThat(InventoryDemo.run(new String[] { "--help" }, print(out), print(err))).isZero();
		assertThat(out.toString(StandardCharsets.UTF_8)).contains("--quick", "--redis HOST:PORT", "--redlock");
		assertThat(InventoryDemo.run(new String[] { "--clients", "none" }, print(out), print(err))).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("Option --clients needs a whole number");
		assertThat(InventoryDemo.run(new String[] { "--quick", "--instances", "1" }, print(out), print(err))).isEqualTo(2);
		assertThat(err.toString(StandardCharsets.UTF_8)).contains("Option --instances needs a whole number of at least 2");
	}

	/** The row of {@code mode} in the table, by column. */
	private static Map<String, String> row(String output, String mode) {
		String line = output.lines().filter((candidate) -> candidate.startsWith(mode + " ")).findFirst()
			.orElseThrow(() -> new AssertionError("No row for " + mode + " in:\n" + output));
		String[] values = line.trim().split(" +");
		assertThat(values).as(line).hasSize(COLUMNS.size());
		Map<String, String> row = new LinkedHashMap<>();
		for (int i = 0; i < values.length; i++) {
			row.put(COLUMNS.get(i), values[i]);
		}
		return row;
	}

	private static PrintStream print(ByteArrayOutputStream bytes) {
		return new PrintStream(bytes, true, StandardCharsets.UTF_8);
	}

}
