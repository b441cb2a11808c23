package dev.distlock.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;

import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs every scenario in smoke mode (a few seconds each) for every contestant, so the benchmark never rots and no
 * contestant, ours included, can lose an update unnoticed. Writes its report into a temporary directory, never into
 * {@code docs/}.
 */
class BenchmarkSmokeTests {

	@Test
	void everyContestantRunsEveryScenarioWithoutErrorsOrLostUpdates(@TempDir Path docs) throws Exception {
		System.setProperty("java.awt.headless", "true");
		Results results;
		try (RedisServer server = RedisServer.start()) {
			results = LockBenchmarks.run(Settings.smoke(), new Contestant.Target(server.host(), server.port()),
					LockBenchmarks.contestants(), EnumSet.allOf(Scenario.class), System.out);
		}
		assertThat(results.errors()).isEmpty();
		assertThat(results.lostUpdates()).isEmpty();
		for (Contestant contestant : results.contestants) {
			for (Scenario scenario : contestant.scenarios()) {
				assertThat(results.turns(scenario, contestant)).as(scenario + " of " + contestant.name())
					.singleElement()
					.satisfies(turn -> assertThat(turn.metrics()).isNotEmpty());
			}
			if (contestant.scenarios().contains(Scenario.HOT_KEY)) {
				assertThat(results.combined(Scenario.HOT_KEY, contestant).get(Metric.CS_PER_SEC))
					.as("critical sections of " + contestant.name()).isPositive();
			}
		}
		Report.write(results, docs.resolve("benchmarks.md"));
		assertThat(docs.resolve("benchmarks.md")).content().contains(Report.BEGIN, "### Goals", Report.END);
		assertThat(Files.size(docs.resolve(Report.CHART))).isPositive();
	}

}
