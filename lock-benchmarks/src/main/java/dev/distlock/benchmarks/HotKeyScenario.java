package dev.distlock.benchmarks;

import static dev.distlock.benchmarks.Workers.closeAll;
import static dev.distlock.benchmarks.Workers.runThreads;
import static dev.distlock.benchmarks.Workers.seconds;
import static dev.distlock.benchmarks.Workers.OS;
import static dev.distlock.benchmarks.Workers.allocatedBytesByThread;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.benchmarks.Contestant.Client;
import dev.distlock.benchmarks.Contestant.Options;
import dev.distlock.benchmarks.Contestant.ReactiveClient;
import dev.distlock.benchmarks.Contestant.Target;
import dev.distlock.benchmarks.Workers.Run;
import dev.distlock.benchmarks.Workers.ThreadState;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.reactive.RedisReactiveCommands;
import io.lettuce.core.api.sync.RedisCommands;
import reactor.core.publisher.Mono;

/** Scenarios 2 and 2b: many clients take turns on one key, and a counter shows whether the lock excluded them all. */
final class HotKeyScenario {

	private final Target target;

	private final Settings settings;

	private final RedisProbe probe;

	HotKeyScenario(Target target, Settings settings, RedisProbe probe) {
		this.target = target;
		this.settings = settings;
		this.probe = probe;
	}

	/**
	 * Scenarios 2 and 2b: {@code clientCount} clients (as that many application instances would have) with
	 * {@code threadsPerClient} threads each take turns on one key; the critical section is a GET then a SET of a counter
	 * on the client's own data connection, which loses updates unless the lock excludes every other holder.
	 */
	Map<Metric, Double> run(Contestant contestant, int clientCount, int threadsPerClient) throws Exception {
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

	private static long lostUpdates(Run run, RedisCommands<String, String> commands, String counter) {
		long done = 0;
		for (ThreadState state : run.states()) {
			done += state.operations;
		}
		String value = commands.get(counter);
		return done - ((value != null) ? Long.parseLong(value) : 0);
	}

}
