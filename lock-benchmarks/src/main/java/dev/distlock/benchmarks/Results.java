package dev.distlock.benchmarks;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** Every turn of one benchmark run, and what is needed to describe the run. */
final class Results {

	final Settings settings;

	final List<Contestant> contestants;

	final String redisVersion;

	final Instant started = Instant.now();

	final double loadAtStart = loadAverage();

	@Nullable Instant finished;

	double loadAtEnd;

	private final List<Turn> turns = new ArrayList<>();

	Results(Settings settings, List<Contestant> contestants, String redisVersion) {
		this.settings = settings;
		this.contestants = List.copyOf(contestants);
		this.redisVersion = redisVersion;
	}

	synchronized void add(Turn turn) {
		this.turns.add(turn);
	}

	void finish() {
		this.finished = Instant.now();
		this.loadAtEnd = loadAverage();
	}

	synchronized List<Turn> turns(Scenario scenario, Contestant contestant) {
		return this.turns.stream().filter(t -> t.scenario() == scenario && t.contestant() == contestant).toList();
	}

	/** The figures of the successful turns, combined per metric as the metric says (median over rounds, mostly). */
	Map<Metric, Double> combined(Scenario scenario, Contestant contestant) {
		Map<Metric, List<Double>> values = new EnumMap<>(Metric.class);
		for (Turn turn : turns(scenario, contestant)) {
			if (turn.error() == null) {
				turn.metrics().forEach((metric, value) -> values.computeIfAbsent(metric, m -> new ArrayList<>()).add(value));
			}
		}
		Map<Metric, Double> combined = new EnumMap<>(Metric.class);
		values.forEach((metric, list) -> {
			double[] array = list.stream().mapToDouble(Double::doubleValue).toArray();
			combined.put(metric, switch (metric.combine) {
				case MEDIAN -> Samples.median(array);
				case MAX -> list.stream().mapToDouble(Double::doubleValue).max().orElse(0);
				case MIN -> list.stream().mapToDouble(Double::doubleValue).min().orElse(0);
				case SUM -> list.stream().mapToDouble(Double::doubleValue).sum();
			});
		});
		return combined;
	}

	/**
	 * The median over rounds of {@code contestant}'s figure divided by {@code reference}'s in the same round: turns of
	 * one round run seconds apart, so a change in the machine's load between rounds cancels out. NaN without a round
	 * in which both have the figure.
	 */
	double ratio(Scenario scenario, Contestant contestant, @Nullable Contestant reference, Metric metric) {
		if (reference == null) {
			return Double.NaN;
		}
		List<Double> ratios = new ArrayList<>();
		for (Turn turn : turns(scenario, contestant)) {
			for (Turn other : turns(scenario, reference)) {
				Double value = turn.metrics().get(metric);
				Double base = other.metrics().get(metric);
				if (other.round() == turn.round() && turn.error() == null && other.error() == null && value != null
						&& base != null && base != 0) {
					ratios.add(value / base);
				}
			}
		}
		return ratios.isEmpty() ? Double.NaN : Samples.median(ratios.stream().mapToDouble(Double::doubleValue).toArray());
	}

	/** The one contestant of a kind (the programmatic one for OURS), or null. */
	@Nullable Contestant first(Contestant.Kind kind) {
		return this.contestants.stream().filter(c -> c.kind() == kind).findFirst().orElse(null);
	}

	/**
	 * The first contestant of a kind that takes part in {@code scenario} (the reference of its "× ours" column), or
	 * null.
	 */
	@Nullable Contestant first(Contestant.Kind kind, Scenario scenario) {
		return this.contestants.stream().filter(c -> c.kind() == kind && c.scenarios().contains(scenario)).findFirst()
			.orElse(null);
	}

	/** The rounds of {@code scenario} in which some contestant's turn failed. */
	synchronized long failedRounds(Scenario scenario) {
		return this.turns.stream().filter(t -> t.scenario() == scenario && t.error() != null).mapToInt(Turn::round)
			.distinct().count();
	}

	synchronized List<String> errors() {
		return this.turns.stream().filter(t -> t.error() != null)
			.map(t -> t.scenario().name() + " round " + t.round() + " " + t.contestant().name() + ": " + t.error())
			.toList();
	}

	/**
	 * Every turn that lost an update, as "contestant: n", and every turn of the permits scenario that had more
	 * holders inside at once than its permits.
	 */
	synchronized List<String> lostUpdates() {
		List<String> lost = new ArrayList<>(this.turns.stream()
			.filter(t -> t.metrics().getOrDefault(Metric.LOST_UPDATES, 0.0) != 0)
			.map(t -> t.contestant().name() + " (round " + t.round() + "): "
					+ t.metrics().get(Metric.LOST_UPDATES).longValue() + " lost updates")
			.toList());
		this.turns.stream()
			.filter(t -> t.metrics().getOrDefault(Metric.MOST_INSIDE, 0.0) > Settings.PERMITS)
			.map(t -> t.contestant().name() + " (round " + t.round() + "): "
					+ t.metrics().get(Metric.MOST_INSIDE).longValue() + " holders inside a semaphore of "
					+ Settings.PERMITS + " permits")
			.forEach(lost::add);
		return lost;
	}

	private static double loadAverage() {
		return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
	}

	/** One measured run of one scenario for one contestant. */
	record Turn(Scenario scenario, Contestant contestant, int round, Map<Metric, Double> metrics,
			@Nullable String error) {
	}

}
