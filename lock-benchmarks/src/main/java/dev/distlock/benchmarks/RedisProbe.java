package dev.distlock.benchmarks;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The benchmark's own view of the server: {@code INFO} figures, and a {@code MONITOR} recording that tells the
 * round trips a client sends (commands from a client connection) apart from the commands its scripts run inside Redis
 * (shown as {@code [0 lua]}); {@code INFO}'s command counters include both.
 */
final class RedisProbe implements AutoCloseable {

	/** Commands the benchmark itself sends; not counted as a contestant's round trips. */
	private static final Set<String> OWN_COMMANDS = Set.of("info", "dbsize", "flushall", "client", "config", "hello");

	private final Contestant.Target target;

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> commands;

	RedisProbe(Contestant.Target target) {
		this.target = target;
		this.client = RedisClient.create(RedisURI.create(target.host(), target.port()));
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
	}

	RedisCommands<String, String> commands() {
		return this.commands;
	}

	Map<String, String> info(String section) {
		Map<String, String> values = new TreeMap<>();
		for (String line : this.commands.info(section).split("\r?\n")) {
			int colon = line.indexOf(':');
			if (colon > 0 && !line.startsWith("#")) {
				values.put(line.substring(0, colon), line.substring(colon + 1).trim());
			}
		}
		return values;
	}

	long connectedClients() {
		return Long.parseLong(info("clients").get("connected_clients"));
	}

	/**
	 * Microseconds the server spent executing the given commands (a script's time includes the commands it runs, which
	 * are also counted under their own names: so only the names clients send are summed).
	 */
	long commandMicros(Set<String> commands) {
		long total = 0;
		for (Map.Entry<String, String> entry : info("commandstats").entrySet()) {
			if (!commands.contains(entry.getKey().substring("cmdstat_".length()))) {
				continue;
			}
			for (String part : entry.getValue().split(",")) {
				if (part.startsWith("usec=")) {
					total += Long.parseLong(part.substring(5));
				}
			}
		}
		return total;
	}

	long dbSize() {
		return this.commands.dbsize();
	}

	/** Keys matching a glob pattern, counted with SCAN. */
	long countKeys(String pattern) {
		long count = 0;
		io.lettuce.core.ScanArgs args = io.lettuce.core.ScanArgs.Builder.matches(pattern).limit(1000);
		io.lettuce.core.KeyScanCursor<String> cursor = this.commands.scan(args);
		count += cursor.getKeys().size();
		while (!cursor.isFinished()) {
			cursor = this.commands.scan(cursor, args);
			count += cursor.getKeys().size();
		}
		return count;
	}

	/** Empty the benchmark's own server between turns (it never runs on a shared Redis). */
	void flushAll() {
		this.commands.flushall();
	}

	String serverVersion() {
		return info("server").getOrDefault("redis_version", "?");
	}

	/**
	 * Poll {@code INFO stats} every {@code periodMillis} on a connection of its own for {@code durationMillis}, and
	 * return the bursts of server activity (polls that saw commands other than their own): {sum of burst spans,
	 * longest span} in ms, each span measured from the poll before its first busy poll to its last busy poll. Unlike
	 * MONITOR, the polls cost the server almost nothing, so the spans are the renewals' own.
	 */
	double[] activityBursts(long durationMillis, long periodMillis) throws InterruptedException {
		try (StatefulRedisConnection<String, String> connection = this.client.connect()) {
			RedisCommands<String, String> sampler = connection.sync();
			long end = System.nanoTime() + durationMillis * 1_000_000;
			long previousCount = processed(sampler);
			long previousTime = System.nanoTime();
			long burstStart = -1;
			long burstLast = -1;
			double busy = 0;
			double longest = 0;
			while (System.nanoTime() - end < 0) {
				Thread.sleep(periodMillis);
				long count = processed(sampler);
				long now = System.nanoTime();
				boolean active = count - previousCount > 1;
				if (active) {
					if (burstStart < 0) {
						burstStart = previousTime;
					}
					burstLast = now;
				}
				else if (burstStart >= 0) {
					double span = (burstLast - burstStart) / 1e6;
					busy += span;
					longest = Math.max(longest, span);
					burstStart = -1;
				}
				previousCount = count;
				previousTime = now;
			}
			if (burstStart >= 0) {
				double span = (burstLast - burstStart) / 1e6;
				busy += span;
				longest = Math.max(longest, span);
			}
			return new double[] { busy, longest };
		}
	}

	private static long processed(RedisCommands<String, String> commands) {
		String info = commands.info("stats");
		int at = info.indexOf("total_commands_processed:");
		int from = at + "total_commands_processed:".length();
		int to = from;
		while (to < info.length() && Character.isDigit(info.charAt(to))) {
			to++;
		}
		return Long.parseLong(info.substring(from, to));
	}

	/** Start recording every command the server executes, until {@link Monitor#stop()}. */
	Monitor monitor() throws IOException, InterruptedException {
		return new Monitor(this.target);
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown();
	}

	/** A {@code MONITOR} connection read on its own thread, whose CPU time is reported so it can be left out. */
	static final class Monitor implements AutoCloseable {

		private final Socket socket;

		private final Thread reader;

		private final CountDownLatch started = new CountDownLatch(1);

		private final Map<String, Long> counts = new TreeMap<>();

		private long[] timestamps = new long[1024];

		private int size;

		private volatile long readerCpuNanos;

		private volatile boolean stopping;

		Monitor(Contestant.Target target) throws IOException, InterruptedException {
			this.socket = new Socket();
			this.socket.connect(new InetSocketAddress(target.host(), target.port()), 5000);
			OutputStream out = this.socket.getOutputStream();
			out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			InputStream in = new BufferedInputStream(this.socket.getInputStream(), 1 << 16);
			this.reader = new Thread(() -> read(in), "bench-monitor");
			this.reader.setDaemon(true);
			this.reader.start();
			if (!this.started.await(5, TimeUnit.SECONDS)) {
				close();
				throw new IOException("MONITOR did not answer");
			}
		}

		private void read(InputStream in) {
			ThreadMXBean threads = ManagementFactory.getThreadMXBean();
			long cpuStart = threads.getCurrentThreadCpuTime();
			ByteArrayOutputStream line = new ByteArrayOutputStream(256);
			try {
				readLine(in, line);
				this.started.countDown();
				while (readLine(in, line)) {
					record(line.toString(StandardCharsets.ISO_8859_1));
				}
			}
			catch (IOException ex) {
				if (!this.stopping) {
					System.err.println("MONITOR reader failed: " + ex);
				}
			}
			finally {
				this.readerCpuNanos = threads.getCurrentThreadCpuTime() - cpuStart;
				this.started.countDown();
			}
		}

		private static boolean readLine(InputStream in, ByteArrayOutputStream line) throws IOException {
			line.reset();
			int b;
			while ((b = in.read()) != -1) {
				if (b == '\n') {
					return true;
				}
				if (b != '\r') {
					line.write(b);
				}
			}
			return false;
		}

		/** {@code +1700000000.123456 [0 127.0.0.1:5555] "evalsha" ...}; {@code [0 lua]} marks commands of scripts. */
		private void record(String line) {
			int open = line.indexOf('[');
			int close = line.indexOf(']', open);
			if (!line.startsWith("+") || open < 0 || close < 0 || line.substring(open, close).endsWith("lua")) {
				return;
			}
			int q1 = line.indexOf('"', close);
			int q2 = line.indexOf('"', q1 + 1);
			if (q1 < 0 || q2 < 0) {
				return;
			}
			String command = line.substring(q1 + 1, q2).toLowerCase(java.util.Locale.ROOT);
			if (OWN_COMMANDS.contains(command)) {
				return;
			}
			String stamp = line.substring(1, line.indexOf(' '));
			int dot = stamp.indexOf('.');
			long micros = Long.parseLong(stamp.substring(0, dot)) * 1_000_000L + Long.parseLong(stamp.substring(dot + 1));
			synchronized (this) {
				this.counts.merge(command, 1L, Long::sum);
				if (this.size == this.timestamps.length) {
					this.timestamps = Arrays.copyOf(this.timestamps, this.size * 2);
				}
				this.timestamps[this.size++] = micros;
			}
		}

		/** Stop recording; returns the client commands seen, in order, with their counts by name. */
		Recording stop() throws InterruptedException {
			this.stopping = true;
			try {
				this.socket.close();
			}
			catch (IOException ex) {
				// closing
			}
			this.reader.join(5000);
			synchronized (this) {
				long[] stamps = Arrays.copyOf(this.timestamps, this.size);
				Arrays.sort(stamps);
				return new Recording(stamps, Map.copyOf(this.counts), this.readerCpuNanos);
			}
		}

		@Override
		public void close() throws InterruptedException {
			if (!this.stopping) {
				stop();
			}
		}

	}

	/** The client commands seen by {@code MONITOR}: server timestamps in µs, counts by command name. */
	record Recording(long[] timestampsMicros, Map<String, Long> counts, long readerCpuNanos) {
	}

}
