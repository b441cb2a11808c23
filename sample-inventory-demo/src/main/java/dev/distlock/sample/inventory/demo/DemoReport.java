package dev.distlock.sample.inventory.demo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.distlock.sample.inventory.stock.LockMode;

/**
 * The table the demo prints, one row per lock mode (and one for Redlock with {@code --redlock}), and the verdict under
 * it. The verdict is the demo's assertion: the distributed lock, on one Redis and on Redlock, must sell exactly
 * {@code min(stock, attempts)} units and never oversell; the other modes are expected to oversell, and when one
 * happens not to, the report says so instead of pretending.
 */
final class DemoReport {

	private static final String HEADER = String.format(Locale.ROOT, "%-12s %8s %6s %9s %8s %12s %9s %6s %8s %8s %8s",
			"mode", "attempts", "sold", "remaining", "oversold", "orders>stock", "busy(409)", "errors", "req/s", "p50 ms",
			"p99 ms");

	private final List<ModeResult> results;

	private final long expectedSold;

	DemoReport(List<ModeResult> results, long expectedSold) {
		this.results = List.copyOf(results);
		this.expectedSold = expectedSold;
	}

	/** Whether the distributed-lock rows (one Redis, and Redlock if it ran) are exact; false if there are none. */
	boolean passed() {
		return this.results.stream().anyMatch(ModeResult::mustBeExact) && this.results.stream()
			.filter(ModeResult::mustBeExact).allMatch((result) -> result.isExact(this.expectedSold));
	}

	/** 0 when {@link #passed()}, else 1. */
	int exitCode() {
		return passed() ? 0 : 1;
	}

	String table() {
		StringBuilder table = new StringBuilder();
		table.append(HEADER).append('\n').append("-".repeat(HEADER.length())).append('\n');
		for (ModeResult result : this.results) {
			table.append(String.format(Locale.ROOT, "%-12s %8d %6d %9d %8d %12d %9d %6d %8.0f %8s %8s", result.row(),
					result.attempts(), result.sold(), result.remaining(), result.oversold(), result.ordersBeyondStock(),
					result.busy(), result.errors(), result.throughput(), millis(result.p50()), millis(result.p99())))
				.append('\n');
		}
		return table.toString();
	}

	/** One line per mode saying what it means, and the overall verdict last. */
	List<String> verdict() {
		List<String> lines = new ArrayList<>();
		for (ModeResult result : this.results) {
			lines.add(String.format(Locale.ROOT, "%-12s %s", result.row() + ":", explain(result)));
			if (result.errors() > 0 && result.firstError() != null) {
				lines.add(String.format(Locale.ROOT, "%-12s first error: %s", "", abbreviate(result.firstError())));
			}
		}
		boolean redlock = this.results.stream().anyMatch((result) -> result.row().equals(ModeResult.REDLOCK));
		if (redlock) {
			lines.add(passed() ? "PASS: the distributed lock, on one Redis and on Redlock, sold exactly " + this.expectedSold
					+ " each time and never oversold."
					: "FAIL: the distributed lock, on one Redis or on Redlock, did not sell exactly " + this.expectedSold
							+ " without overselling.");
		}
		else {
			lines.add(passed() ? "PASS: the distributed lock sold exactly " + this.expectedSold + " and never oversold."
					: "FAIL: the distributed lock did not sell exactly " + this.expectedSold + " without overselling.");
		}
		return lines;
	}

	private String explain(ModeResult result) {
		if (result.mustBeExact()) {
			if (result.isExact(this.expectedSold)) {
				return "sold exactly " + result.sold() + " of " + result.initialStock() + ", never oversold; every unit has "
						+ "one order and one receipt" + (result.row().equals(ModeResult.REDLOCK)
								? " (each lock held on a majority of the Redlock masters)." : ".");
			}
			return "NOT EXACT: sold " + result.sold() + " (expected " + this.expectedSold + "), oversold "
					+ result.oversold() + ", " + result.orders() + " orders, " + result.purchased() + " receipts, "
					+ result.busy() + " lock timeouts, " + result.errors() + " errors.";
		}
		String why = (result.mode() == LockMode.LOCAL) ? "each instance's JVM-local lock keeps out only its own requests"
				: "concurrent purchases read the same stock and overwrite each other's writes";
		if (result.oversells()) {
			return "oversold " + result.oversold() + " units (" + result.orders() + " orders for " + result.initialStock()
					+ " in stock): " + why + ".";
		}
		return "did not oversell in this run. The race is real (" + why + ") but did not show up this time; "
				+ "try more --clients or a longer --delay.";
	}

	private static String millis(Duration duration) {
		return String.format(Locale.ROOT, "%.1f", duration.toNanos() / 1e6);
	}

	private static String abbreviate(String text) {
		String oneLine = text.replaceAll("\\s+", " ");
		return (oneLine.length() > 200) ? oneLine.substring(0, 200) + "..." : oneLine;
	}

}
