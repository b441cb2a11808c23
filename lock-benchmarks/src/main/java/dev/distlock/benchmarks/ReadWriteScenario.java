package dev.distlock.benchmarks;

import static dev.distlock.benchmarks.Workers.closeAll;
import static dev.distlock.benchmarks.Workers.runThreads;
import static dev.distlock.benchmarks.Workers.seconds;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import dev.distlock.benchmarks.Contestant.Client;
import dev.distlock.benchmarks.Contestant.Options;
import dev.distlock.benchmarks.Contestant.Target;
import dev.distlock.benchmarks.Workers.Run;
import dev.distlock.benchmarks.Workers.ThreadState;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/** Scenario 6: readers and writers on one key's read-write lock, and a counter shows whether writers excluded each other. */
final class ReadWriteScenario {

	private final Target target;

	private final Settings settings;

	ReadWriteScenario(Target target, Settings settings) {
		this.target = target;
		this.settings = settings;
	}

	/**
	 * Scenario 6: 4 clients with 2 threads each on one key's read-write lock. Each operation reads (90 %, at random:
	 * the read lock held while GETting the counter) or writes (the write lock held while the counter is incremented
	 * with a GET then a SET, which loses updates unless the write lock excludes every other writer). Reads are
	 * counted in a thread's {@code operations} and {@code latencies}, writes in its {@code writes} and
	 * {@code writeLatencies}; lost updates = writes run - the counter's final value.
	 */
	Map<Metric, Double> run(Contestant contestant) throws Exception {
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

}
