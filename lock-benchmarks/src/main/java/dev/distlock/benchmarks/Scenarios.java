package dev.distlock.benchmarks;

import static dev.distlock.benchmarks.Workers.NOTHING;
import static dev.distlock.benchmarks.Workers.runThreads;
import static dev.distlock.benchmarks.Workers.seconds;
import static dev.distlock.benchmarks.Workers.lockLoop;
import static dev.distlock.benchmarks.Workers.merge;
import static dev.distlock.benchmarks.Workers.settledHeap;
import static dev.distlock.benchmarks.Workers.throughput;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import dev.distlock.benchmarks.Contestant.Client;
import dev.distlock.benchmarks.Contestant.Options;
import dev.distlock.benchmarks.Contestant.Target;
import dev.distlock.benchmarks.Workers.Run;
import dev.distlock.benchmarks.Workers.Worker;

/** One measured run (a "turn") of one scenario for one contestant; each returns that turn's figures. */
final class Scenarios {

	private final Target target;

	private final Settings settings;

	private final RedisProbe probe;

	private final String[] manyKeys = new String[Settings.MANY_KEYS];

	private final java.io.PrintStream log;

	private final HotKeyScenario hotKey;

	private final ReadWriteScenario readWrite;

	private final WatchdogScenario watchdog;

	private final PermitsScenario permits;

	Scenarios(Target target, Settings settings, RedisProbe probe, java.io.PrintStream log) {
		this.log = log;
		this.target = target;
		this.settings = settings;
		this.probe = probe;
		for (int i = 0; i < this.manyKeys.length; i++) {
			this.manyKeys[i] = "many:" + i;
		}
		this.hotKey = new HotKeyScenario(target, settings, probe);
		this.readWrite = new ReadWriteScenario(target, settings);
		this.watchdog = new WatchdogScenario(target, settings, probe, log);
		this.permits = new PermitsScenario(target, settings, probe);
	}

	Map<Metric, Double> run(Scenario scenario, Contestant contestant) throws Exception {
		this.probe.flushAll();
		return switch (scenario) {
			case UNCONTENDED -> uncontended(contestant);
			case HOT_KEY -> this.hotKey.run(contestant, Settings.HOT_KEY_CLIENTS, Settings.HOT_KEY_THREADS);
			case HOT_KEY_8X1 -> this.hotKey.run(contestant, Settings.HOT_KEY_8X1_CLIENTS, 1);
			case MANY_KEYS -> manyKeys(contestant);
			case WATCHDOG -> this.watchdog.run(contestant);
			case MEMORY -> memory(contestant);
			case READ_WRITE -> this.readWrite.run(contestant);
			case PERMITS -> this.permits.run(contestant);
		};
	}

	/** Scenario 1: one thread acquires and releases one free key, over and over. */
	private Map<Metric, Double> uncontended(Contestant contestant) throws Exception {
		try (Client client = contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT))) {
			Worker worker = (thread, end, state) -> lockLoop(client, end, state, () -> "uncontended");
			runThreads(1, this.settings.warmup(), worker);
			Run run = runThreads(1, this.settings.uncontended(), worker);
			Map<Metric, Double> metrics = throughput(run, Metric.OPS_PER_SEC);
			metrics.put(Metric.ROUND_TRIPS_PER_OP, roundTripsPerOperation(client, "uncontended"));
			return metrics;
		}
	}

	/** How many slices scenario 1's measured time is cut into when contestants run interleaved. */
	private static final int UNCONTENDED_SLICES = 10;

	/**
	 * Scenario 1 for several contestants at once: all clients open and warmed up, then the measured time is cut into
	 * slices and the contestants take turns slice by slice, each slice in a different order. Load that comes and goes
	 * on a shared machine then falls on every contestant alike, where turns of whole seconds would each catch
	 * different weather.
	 */
	Map<Contestant, Map<Metric, Double>> uncontendedInterleaved(List<Contestant> contestants) throws Exception {
		this.probe.flushAll();
		Map<Contestant, Client> clients = new java.util.LinkedHashMap<>();
		try {
			for (Contestant contestant : contestants) {
				clients.put(contestant, contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT)));
			}
			Map<Contestant, Worker> workers = new java.util.LinkedHashMap<>();
			clients.forEach((contestant, client) -> workers.put(contestant,
					(thread, end, state) -> lockLoop(client, end, state, () -> "uncontended:" + contestant.name())));
			for (Worker worker : workers.values()) {
				runThreads(1, this.settings.warmup(), worker);
			}
			Duration slice = this.settings.uncontended().dividedBy(UNCONTENDED_SLICES);
			Map<Contestant, List<Run>> runs = new java.util.LinkedHashMap<>();
			List<Contestant> order = new ArrayList<>(workers.keySet());
			for (int i = 0; i < UNCONTENDED_SLICES; i++) {
				java.util.Collections.rotate(order, 1);
				for (Contestant contestant : order) {
					runs.computeIfAbsent(contestant, c -> new ArrayList<>()).add(runThreads(1, slice, workers.get(contestant)));
				}
			}
			Map<Contestant, Samples> alternating = alternate(clients);
			Map<Contestant, Map<Metric, Double>> results = new java.util.LinkedHashMap<>();
			for (Contestant contestant : workers.keySet()) {
				Map<Metric, Double> metrics = throughput(merge(runs.get(contestant)), Metric.OPS_PER_SEC);
				metrics.put(Metric.ALTERNATING_P50_MICROS, alternating.get(contestant).percentile(50) / 1e3);
				String key = "uncontended:" + contestant.name();
				RedisProbe.Recording recording = recordOperations(clients.get(contestant), key);
				metrics.put(Metric.ROUND_TRIPS_PER_OP, recording.timestampsMicros().length / (double) MONITORED_OPERATIONS);
				metrics.put(Metric.REDIS_MICROS_PER_OP,
						redisMicrosPerOperation(clients.get(contestant), key, recording.counts().keySet()));
				results.put(contestant, metrics);
			}
			return results;
		}
		finally {
			for (Client client : clients.values()) {
				client.close();
			}
		}
	}

	/** How many operations each contestant makes when they alternate operation by operation. */
	private static final int ALTERNATING_OPERATIONS = 2_000;

	/**
	 * One thread makes one acquire+release of each contestant in turn, over and over: every contestant's latency is
	 * then sampled within microseconds of the others', so even load that changes from one millisecond to the next
	 * falls on all alike. With one thread, ops/s is the inverse of this latency. The contestants on the run's main
	 * server alternate among themselves, the multi-node ones of {@code --redlock} among themselves after them: a
	 * multi-node release still at work on the shared cores (Redisson's RedissonRedLock unlocks its nodes without
	 * waiting) would otherwise fall on the next single-server operation (issue 31's full run: 0.93 × Redisson and
	 * 0.64 × the floor with them in one loop, 1.15 and 0.80 without).
	 */
	private static Map<Contestant, Samples> alternate(Map<Contestant, Client> clients) throws Exception {
		Map<Contestant, Samples> latencies = new java.util.LinkedHashMap<>();
		for (boolean mainServer : new boolean[] { true, false }) {
			Map<Contestant, Client> group = new java.util.LinkedHashMap<>();
			clients.forEach((contestant, client) -> {
				if (contestant.onMainServer() == mainServer) {
					group.put(contestant, client);
				}
			});
			latencies.putAll(alternateAmong(group));
		}
		return latencies;
	}

	private static Map<Contestant, Samples> alternateAmong(Map<Contestant, Client> clients) throws Exception {
		Map<Contestant, Samples> latencies = new java.util.LinkedHashMap<>();
		clients.keySet().forEach(contestant -> latencies.put(contestant, new Samples()));
		for (int i = 0; i < ALTERNATING_OPERATIONS && !clients.isEmpty(); i++) {
			for (Map.Entry<Contestant, Client> entry : clients.entrySet()) {
				String key = "uncontended:" + entry.getKey().name();
				long start = System.nanoTime();
				entry.getValue().locked(key, NOTHING);
				latencies.get(entry.getKey()).add(System.nanoTime() - start);
			}
		}
		return latencies;
	}

	/** Scenario 3: 16 threads of one process over 1,000 keys, picked at random. */
	private Map<Metric, Double> manyKeys(Contestant contestant) throws Exception {
		try (Client client = contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT))) {
			Worker worker = (thread, end, state) -> lockLoop(client, end, state,
					() -> this.manyKeys[ThreadLocalRandom.current().nextInt(this.manyKeys.length)]);
			runThreads(Settings.MANY_KEYS_THREADS, this.settings.warmup(), worker);
			Run run = runThreads(Settings.MANY_KEYS_THREADS, this.settings.manyKeys(), worker);
			return throughput(run, Metric.OPS_PER_SEC);
		}
	}

	private static final int MONITORED_OPERATIONS = 200;

	/** How many operations the server's time per operation is averaged over. */
	private static final int TIMED_OPERATIONS = 2_000;

	/** Client commands per acquire+release, counted by MONITOR over 200 operations after the measured run. */
	private double roundTripsPerOperation(Client client, String key) throws Exception {
		return recordOperations(client, key).timestampsMicros().length / (double) MONITORED_OPERATIONS;
	}

	/**
	 * The server's time per acquire+release (INFO commandstats, without MONITOR, whose own cost would inflate it) in
	 * the commands this contestant sends: scripts include the commands they run, so what the floor does in one plain
	 * command and what a library does in a script compare directly.
	 */
	private double redisMicrosPerOperation(Client client, String key, Set<String> sent) throws Exception {
		long before = this.probe.commandMicros(sent);
		for (int i = 0; i < TIMED_OPERATIONS; i++) {
			client.locked(key, NOTHING);
		}
		return (this.probe.commandMicros(sent) - before) / (double) TIMED_OPERATIONS;
	}

	/** MONITOR's record of 200 acquire+release operations after the measured run. */
	private RedisProbe.Recording recordOperations(Client client, String key) throws Exception {
		int operations = MONITORED_OPERATIONS;
		RedisProbe.Recording recording;
		try (RedisProbe.Monitor monitor = this.probe.monitor()) {
			for (int i = 0; i < operations; i++) {
				client.locked(key, NOTHING);
			}
			// MONITOR reports a command after it ran; give the last ones time to arrive
			Thread.sleep(200);
			recording = monitor.stop();
		}
		this.log.println("         commands per operation (MONITOR): " + recording.counts().entrySet().stream()
			.map(e -> e.getKey() + " " + String.format(java.util.Locale.ROOT, "%.2f", e.getValue() / (double) operations))
			.collect(java.util.stream.Collectors.joining(", ")));
		return recording;
	}

	/**
	 * Scenario 5: the heap at the start, half way and at the end of many acquire/release cycles (16 threads, every
	 * cycle a new key), each measured after garbage collection; and what is left held afterwards.
	 */
	private Map<Metric, Double> memory(Contestant contestant) throws Exception {
		Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
		// the full count for the programmatic API; a fifth through the annotation, which adds the interceptor's caches
		// on top of the same engine, to keep the run within ten minutes
		long cycles = (contestant instanceof DistlockContestant) ? this.settings.memoryCycles()
				: this.settings.memoryCycles() / 5;
		long perThread = cycles / 2 / Settings.MEMORY_THREADS;
		try (Client client = contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT))) {
			cycle(client, "warmup", Math.max(1, perThread / 20));
			long start = settledHeap();
			long began = System.nanoTime();
			cycle(client, "first", perThread);
			long half = settledHeap();
			cycle(client, "second", perThread);
			long elapsed = System.nanoTime() - began;
			long end = settledHeap();
			long leftover = this.probe.dbSize() + client.heldOrWaiting();
			long done = perThread * 2 * Settings.MEMORY_THREADS;
			metrics.put(Metric.CYCLES, (double) done);
			metrics.put(Metric.OPS_PER_SEC, done / (elapsed / 1e9));
			metrics.put(Metric.HEAP_START_MIB, start / 1048576.0);
			metrics.put(Metric.HEAP_HALF_MIB, half / 1048576.0);
			metrics.put(Metric.HEAP_END_MIB, end / 1048576.0);
			metrics.put(Metric.HEAP_GROWTH_KIB, (end - start) / 1024.0);
			metrics.put(Metric.LEFTOVER, (double) leftover);
		}
		return metrics;
	}

	private void cycle(Client client, String phase, long perThread) throws Exception {
		runThreads(Settings.MEMORY_THREADS, null, (thread, end, state) -> {
			String prefix = "memory:" + phase + ":" + thread + ":";
			for (long i = 0; i < perThread; i++) {
				if (!client.locked(prefix + i, NOTHING)) {
					throw new IllegalStateException("A free key was not acquired: " + prefix + i);
				}
			}
		});
	}

}
