package dev.distlock.benchmarks;

import static dev.distlock.benchmarks.Workers.closeAll;
import static dev.distlock.benchmarks.Workers.runThreads;
import static dev.distlock.benchmarks.Workers.seconds;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.benchmarks.Contestant.Client;
import dev.distlock.benchmarks.Contestant.Options;
import dev.distlock.benchmarks.Contestant.Target;
import dev.distlock.benchmarks.Workers.Run;
import dev.distlock.benchmarks.Workers.ThreadState;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * Scenario 7 (issue 30): a semaphore of {@value Settings#PERMITS} permits on one key, twice as many clients, and a
 * counter in Redis shows how many were inside at once.
 */
final class PermitsScenario {

	private final Target target;

	private final Settings settings;

	private final RedisProbe probe;

	PermitsScenario(Target target, Settings settings, RedisProbe probe) {
		this.target = target;
		this.settings = settings;
		this.probe = probe;
	}

	/**
	 * Scenario 7: {@value Settings#PERMITS_CLIENTS} clients (as that many application instances would have) with one
	 * thread each take permits of one key's semaphore of {@value Settings#PERMITS}, in a loop. The critical section is
	 * an INCR then a DECR of a counter on the client's own data connection: the INCR's reply is how many holders are
	 * inside, counted in Redis by the section itself, so every client sees one count, and its most must never exceed
	 * the permits (reported with the lost updates when it does). The wait is from the acquisition's start to the
	 * section's. MONITOR watches the warm-up, as in the hot-key scenarios: the client commands per critical section,
	 * less its INCR and DECR, show what waking and retrying waiters cost.
	 */
	Map<Metric, Double> run(Contestant contestant) throws Exception {
		List<Client> clients = new ArrayList<>();
		RedisClient dataClient = RedisClient.create(RedisURI.create(this.target.host(), this.target.port()));
		List<StatefulRedisConnection<String, String>> dataConnections = new ArrayList<>();
		try {
			for (int i = 0; i < Settings.PERMITS_CLIENTS; i++) {
				clients.add(contestant.open(this.target, new Options(Settings.LEASE, Settings.WAIT)));
				dataConnections.add(dataClient.connect());
			}
			AtomicLong most = new AtomicLong();
			RedisProbe.Recording recording;
			Run warm;
			try (RedisProbe.Monitor monitor = this.probe.monitor()) {
				warm = runPermits(clients, dataConnections, "permits-inside:warmup", most, this.settings.warmup());
				Thread.sleep(200); // MONITOR reports a command after it ran; give the last ones time to arrive
				recording = monitor.stop();
			}
			long warmSections = 0;
			for (ThreadState state : warm.states()) {
				warmSections += state.operations;
			}
			double lockCommands = (recording.timestampsMicros().length - 2.0 * warmSections) / Math.max(1, warmSections);
			Run run = runPermits(clients, dataConnections, "permits-inside", most, this.settings.hotKey());
			Samples waits = new Samples();
			long inWindow = 0;
			long operations = 0;
			long timeouts = 0;
			long[] perClient = new long[clients.size()];
			for (int i = 0; i < run.states().size(); i++) {
				ThreadState state = run.states().get(i);
				waits.addAll(state.latencies);
				inWindow += state.inWindow;
				operations += state.operations;
				timeouts += state.timeouts;
				perClient[i % clients.size()] += state.inWindow;
			}
			Map<Metric, Double> metrics = new EnumMap<>(Metric.class);
			metrics.put(Metric.CS_PER_SEC, inWindow / seconds(run.window()));
			metrics.put(Metric.WAIT_P50_MILLIS, waits.percentile(50) / 1e6);
			metrics.put(Metric.WAIT_P99_MILLIS, waits.percentile(99) / 1e6);
			metrics.put(Metric.WAIT_MAX_MILLIS, waits.percentile(100) / 1e6);
			metrics.put(Metric.MOST_INSIDE, (double) most.get());
			metrics.put(Metric.LOCK_ROUND_TRIPS_PER_SECTION, lockCommands);
			metrics.put(Metric.BUSIEST_CLIENT_PERCENT,
					100.0 * java.util.Arrays.stream(perClient).max().orElse(0) / Math.max(1, inWindow));
			metrics.put(Metric.CPU_MICROS_PER_OP, run.cpuNanos() / 1e3 / Math.max(1, operations));
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

	private static Run runPermits(List<Client> clients, List<StatefulRedisConnection<String, String>> data,
			String inside, AtomicLong most, Duration duration) throws Exception {
		return runThreads(clients.size(), duration, (thread, end, state) -> {
			Client client = clients.get(thread);
			RedisCommands<String, String> commands = data.get(thread).sync();
			long[] entered = new long[1];
			Runnable section = () -> {
				entered[0] = System.nanoTime();
				most.accumulateAndGet(commands.incr(inside), Math::max);
				commands.decr(inside);
			};
			for (;;) {
				long start = System.nanoTime();
				if (start - end >= 0) {
					return;
				}
				if (!client.permitLocked("permits", Settings.PERMITS, section)) {
					state.timeouts++;
					continue;
				}
				state.latencies.add(entered[0] - start);
				state.operations++;
				state.inWindow += (entered[0] - end < 0) ? 1 : 0;
			}
		});
	}

}
