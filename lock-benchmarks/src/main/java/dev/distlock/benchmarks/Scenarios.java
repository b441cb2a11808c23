package dev.distlock.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.benchmarks.Contestant.Client;
import dev.distlock.benchmarks.Contestant.Hold;
import dev.distlock.benchmarks.Contestant.Options;
import dev.distlock.benchmarks.Contestant.ReactiveClient;
import dev.distlock.benchmarks.Contestant.Target;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/** One measured run (a "turn") of one scenario for one contestant; each returns that turn's figures. */
final class Scenarios {

	private static final Runnable NOTHING = () -> {
	};

	private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

	private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	private static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean) ManagementFactory
		.getOperatingSystemMXBean();

	private final Target target;

	private final Settings settings;

	private final RedisProbe probe;

	private final String[] manyKeys = new String[Settings.MANY_KEYS];

	private final java.io.PrintStream log;

	Scenarios(Target target, Settings settings, RedisProbe probe, java.io.PrintStream log) {
		this.log = log;
		this.target = target;
		this.settings = settings;
		this.probe = probe;
		for (int i = 0; i < this.manyKeys.length; i++) {
			this.manyKeys[i] = "many:" + i;
		}
	}

	Map<Metric, Double> run(Scenario scenario, Contestant contestant) throws Exception {
		this.probe.flushAll();
		return switch (scenario) {
			case UNCONTENDED -> uncontended(contestant);
			case HOT_KEY -> hotKey(contestant, Settings.HOT_KEY_CLIENTS, Settings.HOT_KEY_THREADS);
			case HOT_KEY_8X1 -> hotKey(contestant, Settings.HOT_KEY_8X1_CLIENTS, 1);
			case MANY_KEYS -> manyKeys(contestant);
			case WATCHDOG -> watchdog(contestant);
			case MEMORY -> memory(contestant);
			case READ_WRITE -> readWrite(contestant);
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
	 * falls on all alike. With one thread, ops/s is the inverse of this latency.
	 */
	private static Map<Contestant, Samples> alternate(Map<Contestant, Client> clients) throws Exception {
		Map<Contestant, Samples> latencies = new java.util.LinkedHashMap<>();
		clients.keySet().forEach(contestant -> latencies.put(contestant, new Samples()));
		for (int i = 0; i < ALTERNATING_OPERATIONS; i++) {
			for (Map.Entry<Contestant, Client> entry : clients.entrySet()) {
				String key = "uncontended:" + entry.getKey().name();
				long start = System.nanoTime();
				entry.getValue().locked(key, NOTHING);
				latencies.get(entry.getKey()).add(System.nanoTime() - start);
			}
		}
		return latencies;
	}

	private static Run merge(List<Run> runs) {
		List<ThreadState> states = new ArrayList<>();
		long window = 0;
		long cpu = 0;
		long allocated = 0;
		for (Run run : runs) {
			states.addAll(run.states());
			window += run.window();
			cpu += run.cpuNanos();
			allocated += run.allocatedBytes();
		}
		return new Run(states, window, cpu, allocated);
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

	private static void lockLoop(Client client, long end, ThreadState state, java.util.function.Supplier<String> keys)
			throws Exception {
		for (;;) {
			long start = System.nanoTime();
			if (start - end >= 0) {
				return;
			}
			boolean acquired = client.locked(keys.get(), NOTHING);
			long done = System.nanoTime();
			if (!acquired) {
				state.timeouts++;
				continue;
			}
			state.latencies.add(done - start);
			state.operations++;
			if (done - end < 0) {
				state.inWindow++;
			}
		}
	}

	private static Map<Metric, Double> throughput(Run run, Metric rate) {
		Samples latencies = new Samples();
		long inWindow = 0;
		long operations = 0;
		long timeouts = 0;
		for (ThreadState state : run.states()) {
			latencies.addAll(state.latencies);
			inWindow += state.inWindow;
			operations += state.operations;
			timeouts += state.timeouts;
		}
		Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
		metrics.put(rate, inWindow / seconds(run.window()));
		metrics.put(Metric.CPU_MICROS_PER_OP, run.cpuNanos() / 1e3 / Math.max(1, operations));
		metrics.put(Metric.ALLOCATED_BYTES_PER_OP, run.allocatedBytes() / (double) Math.max(1, operations));
		metrics.put(Metric.P50_MICROS, latencies.percentile(50) / 1e3);
		metrics.put(Metric.P99_MICROS, latencies.percentile(99) / 1e3);
		metrics.put(Metric.TIMEOUTS, (double) timeouts);
		return metrics;
	}

	/**
	 * Scenarios 2 and 2b: {@code clientCount} clients (as that many application instances would have) with
	 * {@code threadsPerClient} threads each take turns on one key; the critical section is a GET then a SET of a counter
	 * on the client's own data connection, which loses updates unless the lock excludes every other holder.
	 */
	private Map<Metric, Double> hotKey(Contestant contestant, int clientCount, int threadsPerClient) throws Exception {
		List<Client> clients = new ArrayList<>();
		RedisClient dataClient = RedisClient.create(RedisURI.create(this.target.host(), this.target.port()));
		List<StatefulRedisConnection<String, String>> dataConnections = new ArrayList<>();
		try {
			for (int i = 0; i < clientCount; i++) {
				clients.add(contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT)));
				dataConnections.add(dataClient.connect());
			}
			long lost = 0;
			// MONITOR watches the warm-up: client commands per critical section, less its GET and SET
			RedisProbe.Recording recording;
			Run warm;
			try (RedisProbe.Monitor monitor = this.probe.monitor()) {
				warm = runHotKey(clients, threadsPerClient, dataConnections, "counter:warmup", this.settings.warmup());
				Thread.sleep(200);
				recording = monitor.stop();
			}
			long warmSections = 0;
			for (ThreadState state : warm.states()) {
				warmSections += state.operations;
			}
			double lockCommands = (recording.timestampsMicros().length - 2.0 * warmSections) / Math.max(1, warmSections);
			lost += lostUpdates(warm, dataConnections.get(0).sync(), "counter:warmup");
			Run run = runHotKey(clients, threadsPerClient, dataConnections, "counter", this.settings.hotKey());
			lost += lostUpdates(run, dataConnections.get(0).sync(), "counter");
			Samples waits = new Samples();
			long inWindow = 0;
			long operations = 0;
			long timeouts = 0;
			long[] perClient = new long[clientCount];
			for (int i = 0; i < run.states().size(); i++) {
				ThreadState state = run.states().get(i);
				waits.addAll(state.latencies);
				inWindow += state.inWindow;
				operations += state.operations;
				timeouts += state.timeouts;
				perClient[i % clientCount] += state.inWindow;
			}
			Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
			metrics.put(Metric.CS_PER_SEC, inWindow / seconds(run.window()));
			metrics.put(Metric.CPU_MICROS_PER_OP, run.cpuNanos() / 1e3 / Math.max(1, operations));
			metrics.put(Metric.WAIT_P50_MILLIS, waits.percentile(50) / 1e6);
			metrics.put(Metric.WAIT_P99_MILLIS, waits.percentile(99) / 1e6);
			metrics.put(Metric.WAIT_MAX_MILLIS, waits.percentile(100) / 1e6);
			metrics.put(Metric.LOCK_ROUND_TRIPS_PER_SECTION, lockCommands);
			metrics.put(Metric.BUSIEST_CLIENT_PERCENT,
					100.0 * java.util.Arrays.stream(perClient).max().orElse(0) / Math.max(1, inWindow));
			metrics.put(Metric.LOST_UPDATES, (double) lost);
			metrics.put(Metric.TIMEOUTS, (double) timeouts);
			return metrics;
		}
		finally {
			for (StatefulRedisConnection<String, String> connection : dataConnections) {
				connection.close();
			}
			dataClient.shutdown();
			closeAll(clients);
		}
	}

	private Run runHotKey(List<Client> clients, int threadsPerClient, List<StatefulRedisConnection<String, String>> data,
			String counter, Duration duration) throws Exception {
		if (clients.stream().allMatch(ReactiveClient.class::isInstance)) {
			return runHotKeyReactive(clients, threadsPerClient, data, counter, duration);
		}
		int threads = clients.size() * threadsPerClient;
		return runThreads(threads, duration, (thread, end, state) -> {
			Client client = clients.get(thread % clients.size());
			RedisCommands<String, String> commands = data.get(thread % clients.size()).sync();
			long[] entered = new long[1];
			Runnable increment = () -> {
				entered[0] = System.nanoTime();
				String value = commands.get(counter);
				commands.set(counter, Long.toString((value != null) ? Long.parseLong(value) + 1 : 1));
			};
			for (;;) {
				long start = System.nanoTime();
				if (start - end >= 0) {
					return;
				}
				if (!client.locked("hot", increment)) {
					state.timeouts++;
					continue;
				}
				state.latencies.add(entered[0] - start);
				state.operations++;
				if (entered[0] - end < 0) {
					state.inWindow++;
				}
			}
		});
	}

	/**
	 * Scenario 2 for a client that locks without blocking: as many in-flight subscriptions per client as the others
	 * have threads, each taking turns on the key until the end, with the GET and the SET of the critical section on
	 * the client's data connection through Lettuce's reactive API. The figures per subscription are those of a
	 * thread; no subscription runs two operations at once, so each one's state needs no more than the happens-before
	 * edges of its own stream.
	 */
	private static Run runHotKeyReactive(List<Client> clients, int slotsPerClient,
			List<StatefulRedisConnection<String, String>> data, String counter, Duration duration)
			throws InterruptedException {
		int slots = clients.size() * slotsPerClient;
		List<ThreadState> states = new ArrayList<>();
		List<Mono<Void>> loops = new ArrayList<>();
		long[] end = new long[1];
		for (int slot = 0; slot < slots; slot++) {
			ThreadState state = new ThreadState();
			states.add(state);
			ReactiveClient client = (ReactiveClient) clients.get(slot % clients.size());
			RedisReactiveCommands<String, String> commands = data.get(slot % clients.size()).reactive();
			long[] started = new long[1];
			long[] entered = new long[1];
			Mono<String> increment = Mono.defer(() -> {
				entered[0] = System.nanoTime();
				return commands.get(counter)
					.map(Long::parseLong)
					.defaultIfEmpty(0L)
					.flatMap((value) -> commands.set(counter, Long.toString(value + 1)));
			});
			Mono<Boolean> operation = Mono.defer(() -> {
				started[0] = System.nanoTime();
				return client.lockedReactive("hot", increment);
			}).doOnNext((locked) -> {
				if (!locked) {
					state.timeouts++;
					return;
				}
				state.latencies.add(entered[0] - started[0]);
				state.operations++;
				if (entered[0] - end[0] < 0) {
					state.inWindow++;
				}
			});
			loops.add(operation.repeat(() -> System.nanoTime() - end[0] < 0).then());
		}
		Map<Long, Long> allocatedBefore = allocatedBytesByThread();
		long cpu = OS.getProcessCpuTime();
		end[0] = System.nanoTime() + duration.toNanos();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		CountDownLatch done = new CountDownLatch(1);
		// subscribed together; each loop checks the end itself, and an acquisition waits at most Settings.WAIT
		Mono.when(loops).subscribe(null, (ex) -> {
			failure.set(ex);
			done.countDown();
		}, done::countDown);
		if (!done.await(duration.toNanos() + Settings.WAIT.multipliedBy(2).toNanos(), TimeUnit.NANOSECONDS)) {
			throw new IllegalStateException("The reactive hot-key run did not end within " + duration.plus(Settings.WAIT.multipliedBy(2)));
		}
		long cpuUsed = OS.getProcessCpuTime() - cpu;
		long allocated = 0;
		for (Map.Entry<Long, Long> entry : allocatedBytesByThread().entrySet()) {
			allocated += entry.getValue() - allocatedBefore.getOrDefault(entry.getKey(), 0L);
		}
		if (failure.get() != null) {
			throw new IllegalStateException("A reactive benchmark subscription failed: " + failure.get(), failure.get());
		}
		return new Run(states, duration.toNanos(), cpuUsed, allocated);
	}

	/**
	 * Scenario 6: 4 clients with 2 threads each on one key's read-write lock. Each operation reads (90 %, at random:
	 * the read lock held while GETting the counter) or writes (the write lock held while the counter is incremented
	 * with a GET then a SET, which loses updates unless the write lock excludes every other writer). Reads are
	 * counted in a thread's {@code operations} and {@code latencies}, writes in its {@code writes} and
	 * {@code writeLatencies}; lost updates = writes run - the counter's final value.
	 */
	private Map<Metric, Double> readWrite(Contestant contestant) throws Exception {
		int clientCount = Settings.HOT_KEY_CLIENTS;
		List<Client> clients = new ArrayList<>();
		RedisClient dataClient = RedisClient.create(RedisURI.create(this.target.host(), this.target.port()));
		List<StatefulRedisConnection<String, String>> dataConnections = new ArrayList<>();
		try {
			for (int i = 0; i < clientCount; i++) {
				clients.add(contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT)));
				dataConnections.add(dataClient.connect());
			}
			Run warm = runReadWrite(clients, dataConnections, "rw-counter:warmup", this.settings.warmup());
			long lost = lostWrites(warm, dataConnections.get(0).sync(), "rw-counter:warmup");
			Run run = runReadWrite(clients, dataConnections, "rw-counter", this.settings.hotKey());
			lost += lostWrites(run, dataConnections.get(0).sync(), "rw-counter");
			Samples readWaits = new Samples();
			Samples writeWaits = new Samples();
			long reads = 0;
			long writes = 0;
			long operations = 0;
			long timeouts = 0;
			for (ThreadState state : run.states()) {
				readWaits.addAll(state.latencies);
				writeWaits.addAll(state.writeLatencies);
				reads += state.inWindow;
				writes += state.writesInWindow;
				operations += state.operations + state.writes;
				timeouts += state.timeouts;
			}
			double seconds = seconds(run.window());
			Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
			metrics.put(Metric.OPS_PER_SEC, (reads + writes) / seconds);
			metrics.put(Metric.READ_OPS_PER_SEC, reads / seconds);
			metrics.put(Metric.WRITE_OPS_PER_SEC, writes / seconds);
			metrics.put(Metric.READ_WAIT_P99_MILLIS, readWaits.percentile(99) / 1e6);
			metrics.put(Metric.WRITE_WAIT_P99_MILLIS, writeWaits.percentile(99) / 1e6);
			metrics.put(Metric.CPU_MICROS_PER_OP, run.cpuNanos() / 1e3 / Math.max(1, operations));
			metrics.put(Metric.LOST_UPDATES, (double) lost);
			metrics.put(Metric.TIMEOUTS, (double) timeouts);
			return metrics;
		}
		finally {
			for (StatefulRedisConnection<String, String> connection : dataConnections) {
				connection.close();
			}
			dataClient.shutdown();
			closeAll(clients);
		}
	}

	private static Run runReadWrite(List<Client> clients, List<StatefulRedisConnection<String, String>> data,
			String counter, Duration duration) throws Exception {
		int threads = clients.size() * Settings.HOT_KEY_THREADS;
		return runThreads(threads, duration, (thread, end, state) -> {
			Client client = clients.get(thread % clients.size());
			RedisCommands<String, String> commands = data.get(thread % clients.size()).sync();
			long[] entered = new long[1];
			Runnable read = () -> {
				entered[0] = System.nanoTime();
				commands.get(counter);
			};
			Runnable write = () -> {
				entered[0] = System.nanoTime();
				String value = commands.get(counter);
				commands.set(counter, Long.toString((value != null) ? Long.parseLong(value) + 1 : 1));
			};
			for (;;) {
				long start = System.nanoTime();
				if (start - end >= 0) {
					return;
				}
				boolean reading = ThreadLocalRandom.current().nextDouble() < Settings.READ_SHARE;
				if (!(reading ? client.readLocked("rw", read) : client.writeLocked("rw", write))) {
					state.timeouts++;
					continue;
				}
				boolean inWindow = entered[0] - end < 0;
				if (reading) {
					state.latencies.add(entered[0] - start);
					state.operations++;
					state.inWindow += inWindow ? 1 : 0;
				}
				else {
					state.writeLatencies.add(entered[0] - start);
					state.writes++;
					state.writesInWindow += inWindow ? 1 : 0;
				}
			}
		});
	}

	/** Writes run - the counter's final value: the increments a write lock that let two writers in lost. */
	private static long lostWrites(Run run, RedisCommands<String, String> commands, String counter) {
		long done = 0;
		for (ThreadState state : run.states()) {
			done += state.writes;
		}
		String value = commands.get(counter);
		return done - ((value != null) ? Long.parseLong(value) : 0);
	}

	private static long lostUpdates(Run run, RedisCommands<String, String> commands, String counter) {
		long done = 0;
		for (ThreadState state : run.states()) {
			done += state.operations;
		}
		String value = commands.get(counter);
		return done - ((value != null) ? Long.parseLong(value) : 0);
	}

	/**
	 * Scenario 4 (and the first half of 5): one thread acquires many leases with a short lease time and holds them
	 * while the library's watchdog renews them. Measured: the retained heap per held lease, the round trips the
	 * renewals cost (seen by MONITOR), how long each burst of renewals takes on the server, the server's CPU, and the
	 * client process's CPU (less the MONITOR reader's).
	 */
	private Map<Metric, Double> watchdog(Contestant contestant) throws Exception {
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

	/**
	 * Used heap after garbage collection: the least of five readings, each after {@code System.gc()}, so that objects
	 * that threads of the libraries happen to have in flight at one reading do not count.
	 */
	static long settledHeap() throws InterruptedException {
		long least = Long.MAX_VALUE;
		for (int i = 0; i < 5; i++) {
			System.gc();
			Thread.sleep(40);
			least = Math.min(least, MEMORY.getHeapMemoryUsage().getUsed());
		}
		return least;
	}

	private static double seconds(long nanos) {
		return nanos / 1e9;
	}

	static void closeAll(List<Client> clients) {
		for (Client client : clients) {
			try {
				client.close();
			}
			catch (Exception ex) {
				System.err.println("Could not close " + client + ": " + ex);
			}
		}
	}

	/**
	 * Run {@code threads} workers at once until {@code duration} has passed (they check the end themselves), or, with
	 * no duration, until each has done its work. Fails with the first worker's failure.
	 */
	private static Run runThreads(int threads, @Nullable Duration duration, Worker worker) throws Exception {
		CountDownLatch ready = new CountDownLatch(threads);
		CountDownLatch go = new CountDownLatch(1);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<ThreadState> states = new ArrayList<>();
		List<Thread> started = new ArrayList<>();
		long[] end = new long[1];
		for (int i = 0; i < threads; i++) {
			ThreadState state = new ThreadState();
			states.add(state);
			int index = i;
			Thread thread = new Thread(() -> {
				ready.countDown();
				try {
					go.await();
					long allocatedAtStart = THREADS.getCurrentThreadAllocatedBytes();
					try {
						worker.run(index, end[0], state);
					}
					finally {
						state.allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedAtStart;
					}
				}
				catch (Throwable ex) {
					failure.compareAndSet(null, ex);
				}
			}, "bench-worker-" + i);
			thread.start();
			started.add(thread);
		}
		ready.await();
		Map<Long, Long> allocatedBefore = allocatedBytesByThread();
		long cpu = OS.getProcessCpuTime();
		long start = System.nanoTime();
		end[0] = start + ((duration != null) ? duration.toNanos() : Long.MAX_VALUE / 4);
		go.countDown();
		for (Thread thread : started) {
			thread.join();
		}
		long cpuUsed = OS.getProcessCpuTime() - cpu;
		long allocated = 0;
		for (Map.Entry<Long, Long> entry : allocatedBytesByThread().entrySet()) {
			allocated += entry.getValue() - allocatedBefore.getOrDefault(entry.getKey(), 0L);
		}
		for (ThreadState state : states) {
			allocated += state.allocated;
		}
		if (failure.get() != null) {
			throw new IllegalStateException("A benchmark thread failed: " + failure.get(), failure.get());
		}
		return new Run(states, (duration != null) ? duration.toNanos() : System.nanoTime() - start, cpuUsed, allocated);
	}

	/** Heap allocated so far by every live thread (the workers, which end before the count, report their own). */
	private static Map<Long, Long> allocatedBytesByThread() {
		long[] ids = THREADS.getAllThreadIds();
		long[] bytes = THREADS.getThreadAllocatedBytes(ids);
		Map<Long, Long> result = new java.util.HashMap<>();
		for (int i = 0; i < ids.length; i++) {
			if (bytes[i] >= 0) {
				result.put(ids[i], bytes[i]);
			}
		}
		return result;
	}

	@FunctionalInterface
	private interface Worker {

		void run(int thread, long endNanos, ThreadState state) throws Exception;

	}

	/** One worker thread's figures; latencies are the whole operation, or the wait in scenario 2. */
	private static final class ThreadState {

		final Samples latencies = new Samples();

		long operations;

		long inWindow;

		long timeouts;

		long allocated;

		/** The read-write scenario's writes (its reads are {@link #latencies}, {@link #operations}, {@link #inWindow}). */
		final Samples writeLatencies = new Samples();

		long writes;

		long writesInWindow;

	}

	/** What the workers did; {@code cpuNanos} is the CPU time of the whole process while they ran. */
	private record Run(List<ThreadState> states, long window, long cpuNanos, long allocatedBytes) {
	}

}
