package dev.distlock.benchmarks;

import static dev.distlock.benchmarks.Workers.OS;
import static dev.distlock.benchmarks.Workers.settledHeap;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.distlock.benchmarks.Contestant.Client;
import dev.distlock.benchmarks.Contestant.Hold;
import dev.distlock.benchmarks.Contestant.Options;
import dev.distlock.benchmarks.Contestant.Target;

/** Scenario 4 (and the first half of 5): many leases held at once while the library's watchdog renews them. */
final class WatchdogScenario {

	private final Target target;

	private final Settings settings;

	private final RedisProbe probe;

	private final PrintStream log;

	WatchdogScenario(Target target, Settings settings, RedisProbe probe, PrintStream log) {
		this.target = target;
		this.settings = settings;
		this.probe = probe;
		this.log = log;
	}

	/**
	 * Scenario 4 (and the first half of 5): one thread acquires many leases with a short lease time and holds them
	 * while the library's watchdog renews them. Measured: the retained heap per held lease, the round trips the
	 * renewals cost (seen by MONITOR), how long each burst of renewals takes on the server, the server's CPU, and the
	 * client process's CPU (less the MONITOR reader's).
	 */
	Map<Metric, Double> run(Contestant contestant) throws Exception {
		int count = this.settings.watchdogLeases();
		long baseConnections = this.probe.connectedClients();
		Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
		try (Client client = contestant.open(this.target, new Options(this.settings.watchdogTtl(), Duration.ZERO))) {
			// Warm up with one batch held and released together, then let a renewal interval pass: Redisson starts a
			// new renewal chain each time its held-lock count rises from zero while the old chain's timer is pending,
			// so 500 single hold/release pairs would leave up to 500 chains renewing the measured leases.
			List<Hold> warmup = new ArrayList<>();
			for (int i = 0; i < 500; i++) {
				warmup.add(client.hold("warmup:" + i));
			}
			for (Hold hold : warmup) {
				hold.release();
			}
			Thread.sleep(this.settings.renewalInterval().toMillis() + 300);
			long heapBefore = settledHeap();
			List<Hold> holds = new ArrayList<>(count);
			long start = System.nanoTime();
			try {
				for (int i = 0; i < count; i++) {
					holds.add(client.hold("held:" + i));
				}
				long acquired = System.nanoTime();
				long heapHeld = settledHeap();
				metrics.put(Metric.LEASES, (double) count);
				metrics.put(Metric.ACQUIRE_ALL_MILLIS, (acquired - start) / 1e6);
				metrics.put(Metric.HEAP_PER_LEASE_BYTES, (heapHeld - heapBefore) / (double) count);
				metrics.put(Metric.CONNECTIONS, (double) (this.probe.connectedClients() - baseConnections));
				observeRenewals(metrics);
				metrics.put(Metric.LEASES_ALIVE, (double) this.probe.countKeys("*held:*"));
			}
			finally {
				long lost = 0;
				for (Hold hold : holds) {
					try {
						hold.release();
					}
					catch (Exception ex) {
						// the lease was gone at release: its renewal came too late
						lost++;
					}
				}
				metrics.put(Metric.LEASES_LOST, (double) lost);
			}
		}
		return metrics;
	}

	/**
	 * Two windows of the same length. In the first, MONITOR records the commands clients send (its own cost inflates
	 * the server's time, so nothing is timed from it); in the second, without MONITOR, the server's time in those
	 * commands (scripts include the commands they run), the bursts of server activity (polled every 5 ms) and the
	 * client process's CPU are measured.
	 */
	private void observeRenewals(Map<Metric, Double> metrics) throws Exception {
		long window = this.settings.watchdogWindow().toNanos();
		double cycles = (double) window / this.settings.renewalInterval().toNanos();
		RedisProbe.Recording recording;
		try (RedisProbe.Monitor monitor = this.probe.monitor()) {
			Thread.sleep(window / 1_000_000);
			recording = monitor.stop();
		}
		metrics.put(Metric.ROUND_TRIPS_PER_CYCLE, recording.timestampsMicros().length / cycles);
		Set<String> sent = recording.counts().keySet();
		long serverMicros = this.probe.commandMicros(sent);
		long cpu = OS.getProcessCpuTime();
		long start = System.nanoTime();
		double[] bursts = this.probe.activityBursts(window / 1_000_000, 5);
		long elapsed = System.nanoTime() - start;
		metrics.put(Metric.BUSY_MILLIS_PER_CYCLE, bursts[0] / (elapsed / (double) this.settings.renewalInterval().toNanos()));
		metrics.put(Metric.LONGEST_BURST_MILLIS, bursts[1]);
		long clientCpu = OS.getProcessCpuTime() - cpu;
		long serverMicrosUsed = this.probe.commandMicros(sent) - serverMicros;
		metrics.put(Metric.REDIS_CPU_MILLIS_PER_CYCLE, serverMicrosUsed / 1e3 / (elapsed / (double) this.settings.renewalInterval().toNanos()));
		metrics.put(Metric.CLIENT_CPU_PERCENT, 100.0 * clientCpu / elapsed);
		this.log.println("         commands per renewal cycle (MONITOR): " + recording.counts().entrySet().stream()
			.map(e -> e.getKey() + " " + String.format(java.util.Locale.ROOT, "%.0f", e.getValue() / cycles))
			.collect(java.util.stream.Collectors.joining(", ")));
	}

}
