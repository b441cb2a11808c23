package dev.distlock.sample.inventory.demo;

import java.time.Duration;
import java.util.List;

import dev.distlock.sample.inventory.stock.LockMode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The demo's assertion: what makes it exit with 0, and what it says when the unlocked modes happen not to oversell. */
class DemoReportTests {

	@Test
	void passesWhenTheDistributedLockSoldExactlyTheStock() {
		DemoReport report = new DemoReport(List.of(result(LockMode.NONE, 2000, 2000, 300, 2000),
				result(LockMode.LOCAL, 700, 700, 0, 700), exact(500)), 500);

		assertThat(report.passed()).isTrue();
		assertThat(report.exitCode()).isZero();
		assertThat(report.table()).contains("oversold", "none", "local", "distributed");
		assertThat(report.verdict()).first().asString().startsWith("none:").contains("oversold 1800 units (2000 orders for 500 in stock)");
		assertThat(report.verdict()).last().asString().startsWith("PASS");
	}

	@Test
	void failsWhenTheDistributedLockOversold() {
		DemoReport report = new DemoReport(List.of(result(LockMode.DISTRIBUTED, 501, 501, 0, 501)), 500);

		assertThat(report.exitCode()).isEqualTo(1);
		assertThat(report.verdict()).last().asString().startsWith("FAIL");
	}

	@Test
	void failsWhenTheDistributedLockSoldTooLittle() {
		DemoReport report = new DemoReport(List.of(result(LockMode.DISTRIBUTED, 499, 499, 1, 499)), 500);

		assertThat(report.exitCode()).isEqualTo(1);
	}

	@Test
	void failsWhenAReceiptIsMissingForASoldUnit() {
		DemoReport report = new DemoReport(List.of(result(LockMode.DISTRIBUTED, 500, 500, 0, 499)), 500);

		assertThat(report.exitCode()).isEqualTo(1);
	}

	@Test
	void failsWithoutADistributedRow() {
		assertThat(new DemoReport(List.of(result(LockMode.NONE, 500, 500, 0, 500)), 500).exitCode()).isEqualTo(1);
	}

	@Test
	void saysSoWhenAnUnlockedModeHappenedNotToOversell() {
		DemoReport report = new DemoReport(List.of(result(LockMode.LOCAL, 500, 500, 0, 500), exact(500)), 500);

		assertThat(report.passed()).isTrue();
		assertThat(report.verdict().get(0)).contains("did not oversell in this run");
	}

	@Test
	void lessAttemptsThanStockMustSellOnePerAttempt() {
		ModeResult result = new ModeResult("distributed", LockMode.DISTRIBUTED, 50, 50, 0, 0, 0, null, 100, 50, 50, 50,
				Duration.ofSeconds(1), Duration.ofMillis(1), Duration.ofMillis(2));

		assertThat(new DemoReport(List.of(result), 50).passed()).isTrue();
	}

	@Test
	void theRedlockRowMustBeExactToo() {
		ModeResult redlock = redlock(500, 500, 0, 500);
		DemoReport report = new DemoReport(List.of(result(LockMode.NONE, 2000, 2000, 300, 2000), exact(500), redlock),
				500);

		assertThat(report.exitCode()).isZero();
		assertThat(report.table()).containsPattern("(?m)^redlock +2000 +500 +0 +0 +0 ");
		assertThat(report.verdict()).anySatisfy((line) -> assertThat(line).startsWith("redlock:")
			.contains("sold exactly 500 of 500", "majority of the Redlock masters"));
		assertThat(report.verdict()).last().asString()
			.isEqualTo("PASS: the distributed lock, on one Redis and on Redlock, sold exactly 500 each time and never "
					+ "oversold.");
	}

	@Test
	void failsWhenTheRedlockRowOversoldEvenIfTheDistributedRowIsExact() {
		DemoReport report = new DemoReport(List.of(exact(500), redlock(501, 501, 0, 501)), 500);

		assertThat(report.exitCode()).isEqualTo(1);
		assertThat(report.verdict()).anySatisfy((line) -> assertThat(line).startsWith("redlock:").contains("NOT EXACT"));
		assertThat(report.verdict()).last().asString().startsWith("FAIL: the distributed lock, on one Redis or on Redlock");
	}

	private static ModeResult redlock(long sold, long orders, long remaining, int receipts) {
		return new ModeResult(ModeResult.REDLOCK, LockMode.DISTRIBUTED, 2000, receipts, 2000 - receipts, 0, 0, null, 500,
				remaining, sold, orders, Duration.ofSeconds(2), Duration.ofMillis(5), Duration.ofMillis(40));
	}

	private static ModeResult exact(long stock) {
		return result(LockMode.DISTRIBUTED, stock, stock, 0, (int) stock);
	}

	private static ModeResult result(LockMode mode, long sold, long orders, long remaining, int receipts) {
		return new ModeResult(mode.parameterValue(), mode, 2000, receipts, 2000 - receipts, 0, 0, null, 500, remaining, sold, orders,
				Duration.ofSeconds(2), Duration.ofMillis(5), Duration.ofMillis(40));
	}

}
