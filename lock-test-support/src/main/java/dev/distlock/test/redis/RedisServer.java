package dev.distlock.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * One real {@code redis-server} process on a free port of {@code 127.0.0.1}.
 *
 * <p>Tests need a Redis they fully own: one they can stop, kill, restart (losing all data: no RDB,
 * no AOF, private temp dir) and freeze with SIGSTOP to simulate a hung server, without ever touching
 * a shared Redis on port 6379. Every wait has a deadline, and a JVM shutdown hook kills whatever
 * is still running, so a failing test cannot leak processes or hang the build.
 *
 * <p>Process control ({@link #pause()}, {@link #resume()}) uses the POSIX {@code kill} command, so
 * this class targets Linux and macOS.
 */
public final class RedisServer implements AutoCloseable {

	/** The only address servers bind to. */
	public static final String HOST = "127.0.0.1";

	private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(10);
	private static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
	private static final Duration KILL_TIMEOUT = Duration.ofSeconds(2);
	private static final int PORT_ATTEMPTS = 5;
	private static final int LOG_TAIL_LINES = 40;
	private static final String SENTINEL_CONFIG_FILE = "sentinel.conf";
	private static final int CLUSTER_BUS_OFFSET = 10000;

	/** Servers not yet closed: the shutdown hook kills their processes and deletes their dirs. */
	private static final Set<RedisServer> LIVE = ConcurrentHashMap.newKeySet();
	private static @Nullable RedisServer shared;

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(RedisServer::destroyAll, "distlock-redis-cleanup"));
	}

	private final RedisBinary binary;
	private final int port;
	private final Path directory;
	private final Path logFile;
	private final List<String> extraArgs;
	private final @Nullable String sentinelConfig;
	private final Duration startTimeout;
	private final Duration commandTimeout;
	private final boolean sharedInstance;
	private volatile @Nullable Process process;
	private volatile boolean paused;
	private boolean closed;

	private RedisServer(Builder builder, RedisBinary binary, int port, Path directory, boolean sharedInstance) {
		this.binary = binary;
		this.port = port;
		this.directory = directory;
		this.logFile = directory.resolve("redis.log");
		this.extraArgs = List.copyOf(builder.args);
		this.sentinelConfig = builder.sentinelConfig;
		this.startTimeout = builder.startTimeout;
		this.commandTimeout = builder.commandTimeout;
		this.sharedInstance = sharedInstance;
	}

	/** Starts a server with {@link RedisBinary#detect()}. */
	public static RedisServer start() {
		return builder().start();
	}

	/** Starts a server with the given binary. */
	public static RedisServer start(RedisBinary binary) {
		return builder().binary(binary).start();
	}

	/**
	 * Starts one server per builder, all at once: on a loaded machine most of a start is waiting
	 * for the new process to answer, and a topology need not wait for its nodes one by one. If
	 * any start fails, the others are closed and the first failure is thrown.
	 */
	static List<RedisServer> startAll(List<Builder> builders) {
		ExecutorService executor = Executors.newFixedThreadPool(Math.max(1, builders.size()));
		try {
			List<Future<RedisServer>> starts = builders.stream().map(builder -> executor.submit(builder::start)).toList();
			List<RedisServer> started = new ArrayList<>();
			RuntimeException failure = null;
			for (Future<RedisServer> start : starts) {
				try {
					started.add(start.get()); // bounded: each attempt of a start has its own deadline
				} catch (ExecutionException | InterruptedException e) {
					if (e instanceof InterruptedException) {
						Thread.currentThread().interrupt(); // servers still starting are left to the shutdown hook
					}
					RuntimeException cause = e.getCause() instanceof RuntimeException runtime ? runtime
							: new IllegalStateException("Starting redis-server failed", e);
					if (failure == null) {
						failure = cause;
					} else {
						failure.addSuppressed(cause);
					}
					if (e instanceof InterruptedException) {
						break;
					}
				}
			}
			if (failure != null) {
				for (RedisServer server : started) {
					server.close();
				}
				throw failure;
			}
			return started;
		} finally {
			executor.shutdown();
		}
	}

	/** A builder for extra configuration or timeouts. */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * One server per JVM, started lazily and stopped by the shutdown hook; {@link #close()} on it
	 * does nothing. If a test stopped or paused it, the next call restarts or resumes it.
	 */
	public static synchronized RedisServer shared() {
		RedisServer server = shared;
		if (server == null) {
			server = launchNew(builder(), true);
			shared = server;
		}
		server.ensureReady();
		return server;
	}

	public String host() {
		return HOST;
	}

	public int port() {
		return port;
	}

	/** {@code redis://127.0.0.1:<port>}. */
	public String uri() {
		return "redis://" + HOST + ":" + port;
	}

	public RedisBinary binary() {
		return binary;
	}

	/** The server version, e.g. {@code 7.0.15}. */
	public String version() {
		return binary.version();
	}

	/**
	 * The server's private working directory: kept across {@link #restart()} (so a cluster node's
	 * {@code nodes.conf} and a sentinel's rewritten config survive it), deleted by {@link #close()}.
	 */
	public Path directory() {
		return directory;
	}

	/** The file receiving the server's stdout and stderr, across restarts. */
	public Path logFile() {
		return logFile;
	}

	/** The last {@code lines} lines of {@link #logFile()}. */
	public String logTail(int lines) {
		try {
			String[] all = new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8).split("\r?\n");
			return String.join("\n", Arrays.asList(all).subList(Math.max(0, all.length - lines), all.length));
		} catch (NoSuchFileException e) {
			return "";
		} catch (IOException e) {
			return "<cannot read " + logFile + ": " + e + ">";
		}
	}

	/** The process id of the running server. */
	public long pid() {
		return requireRunning().pid();
	}

	public boolean isRunning() {
		Process p = process;
		return p != null && p.isAlive();
	}

	public boolean isPaused() {
		return paused && isRunning();
	}

	/** Whether this runs {@code redis-server --sentinel} ({@link Builder#sentinel(String)}). */
	public boolean isSentinel() {
		return sentinelConfig != null;
	}

	/**
	 * Sends one command on a fresh connection, with the default command timeout (5 s).
	 *
	 * @return a {@code String} (simple or bulk string), {@code Long}, {@code List} (arrays; error
	 *     elements appear as {@link RedisErrorException}) or {@code null} (nil)
	 * @throws RedisErrorException on an error reply
	 * @throws UncheckedIOException on connection failures and timeouts (cause e.g.
	 *     {@link java.net.SocketTimeoutException})
	 */
	public @Nullable Object execute(String... command) {
		return execute(commandTimeout, command);
	}

	/** As {@link #execute(String...)} with the given connect and read timeout. */
	public @Nullable Object execute(Duration timeout, String... command) {
		try {
			return Resp.execute(HOST, port, timeout, command);
		} catch (IOException e) {
			throw new UncheckedIOException(String.join(" ", command) + " on " + uri() + " failed: " + e, e);
		}
	}

	/**
	 * Stops the server: resumes it if paused, sends {@code SHUTDOWN NOSAVE}, then SIGTERM and
	 * SIGKILL if it has not exited within deadlines. Idempotent; {@link #restart()} can follow.
	 */
	public synchronized void stop() {
		Process p = process;
		if (p == null) {
			return;
		}
		try {
			if (p.isAlive()) {
				if (paused) {
					signalQuietly(p, "CONT");
				}
				try {
					Resp.execute(HOST, port, Duration.ofSeconds(2), "SHUTDOWN", "NOSAVE");
				} catch (IOException | RuntimeException expected) {
					// on success the server closes the connection without a reply
				}
				terminate(p, STOP_TIMEOUT);
			}
		} finally {
			process = null;
			paused = false;
		}
	}

	/**
	 * Kills the process with SIGKILL, as a crash or power loss would: no {@code SHUTDOWN}, so a
	 * cluster node or sentinel cannot tell its peers, and nothing is written on the way out.
	 * Idempotent; {@link #restart()} can follow.
	 */
	public synchronized void kill() {
		Process p = process;
		if (p == null) {
			return;
		}
		p.destroyForcibly(); // SIGKILL, which also ends a SIGSTOPped process
		if (!waitFor(p, STOP_TIMEOUT)) {
			// still tracked, so close() and the shutdown hook try again
			throw new IllegalStateException("redis-server " + p.pid() + " on " + uri() + " survived SIGKILL for " + STOP_TIMEOUT);
		}
		process = null;
		paused = false;
	}

	/**
	 * Stops the server if needed and starts a fresh process on the same port and directory, with no
	 * data (files the server wrote in {@link #directory()} stay). Waits until the port is free and
	 * the new process answers.
	 */
	public synchronized void restart() {
		ensureOpen();
		stop();
		long deadline = System.nanoTime() + startTimeout.toNanos();
		awaitPortFree(deadline);
		while (true) {
			try {
				launch();
				return;
			} catch (PortInUseException e) {
				if (System.nanoTime() - deadline > 0) {
					throw e;
				}
				sleep(50);
			}
		}
	}

	/** Freezes the process with SIGSTOP: connections are accepted but never answered. */
	public synchronized void pause() {
		Process p = requireRunning();
		if (!paused) {
			signal(p, "STOP");
			paused = true;
			awaitStopped(p);
		}
	}

	/** Continues a paused process with SIGCONT; does nothing if not paused. */
	public synchronized void resume() {
		Process p = process;
		if (paused && p != null && p.isAlive()) {
			signal(p, "CONT");
		}
		paused = false;
	}

	/** Stops the server and deletes its directory. Idempotent; a no-op on {@link #shared()}. */
	@Override
	public void close() {
		if (sharedInstance) {
			return;
		}
		synchronized (this) {
			if (closed) {
				return;
			}
			closed = true;
			try {
				stop();
			} finally {
				LIVE.remove(this);
				deleteRecursively(directory);
			}
		}
	}

	@Override
	public String toString() {
		return "RedisServer[" + uri() + ", redis " + version() + " (" + binary.source() + "), "
				+ (isPaused() ? "paused" : isRunning() ? "running" : "stopped") + "]";
	}

	/** Makes the server usable again after a test stopped or paused it. */
	synchronized void ensureReady() {
		ensureOpen();
		if (paused) {
			resume();
		}
		if (!isRunning()) {
			restart();
		}
	}

	private static RedisServer launchNew(Builder builder, boolean sharedInstance) {
		return launchNew(builder, sharedInstance, RedisServer::freePort);
	}

	/** Starts on ports from {@code ports}, moving on when redis loses a bind race; a test seam. */
	static RedisServer launchNew(Builder builder, boolean sharedInstance, IntSupplier ports) {
		RedisBinary binary = builder.binary != null ? builder.binary : RedisBinary.detect();
		Path directory;
		try {
			directory = Files.createTempDirectory("distlock-redis-");
		} catch (IOException e) {
			throw new UncheckedIOException("Cannot create a temp dir for redis-server", e);
		}
		PortInUseException lastBindFailure = null;
		for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
			RedisServer server = new RedisServer(builder, binary, ports.getAsInt(), directory, sharedInstance);
			try {
				server.launch();
				return server;
			} catch (PortInUseException e) {
				lastBindFailure = e; // another process took the port between our probe and redis' bind
				LIVE.remove(server);
				clearExceptLog(directory); // e.g. the nodes.conf of a cluster node that could not bind its bus port
			} catch (RuntimeException e) {
				LIVE.remove(server);
				deleteRecursively(directory);
				throw e;
			}
		}
		deleteRecursively(directory);
		throw new IllegalStateException("No free port after " + PORT_ATTEMPTS + " attempts", lastBindFailure);
	}

	private synchronized void launch() {
		long logOffset = size(logFile);
		writeSentinelConfigOnce();
		Process p;
		try {
			p = new ProcessBuilder(command())
					.directory(directory.toFile())
					.redirectErrorStream(true)
					.redirectOutput(Redirect.appendTo(logFile.toFile()))
					.start();
			p.getOutputStream().close();
		} catch (IOException e) {
			throw new UncheckedIOException("Cannot start " + binary.path(), e);
		}
		process = p;
		paused = false;
		LIVE.add(this);
		long deadline = System.nanoTime() + startTimeout.toNanos();
		while (true) {
			if (!p.isAlive()) {
				process = null;
				String message = "redis-server exited with code " + p.exitValue() + " while starting on " + HOST + ":" + port;
				if (logSince(logOffset).contains("Address already in use")) {
					throw new PortInUseException(failure(message));
				}
				throw new IllegalStateException(failure(message));
			}
			if (isOurs(p)) {
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				terminate(p, Duration.ZERO);
				process = null;
				throw new IllegalStateException(failure("redis-server did not answer on " + HOST + ":" + port + " within " + startTimeout));
			}
			sleep(20);
		}
	}

	/** Ready when the server on our port answers and is our process (not one that won a port race). */
	private boolean isOurs(Process p) {
		try {
			Object info = Resp.execute(HOST, port, Duration.ofMillis(250), "INFO", "server");
			return info instanceof String text && text.contains("process_id:" + p.pid() + "\r\n");
		} catch (IOException | RuntimeException e) {
			return false;
		}
	}

	/** A sentinel rewrites its config file as it learns, so only the first launch writes it. */
	private void writeSentinelConfigOnce() {
		String config = sentinelConfig;
		Path file = directory.resolve(SENTINEL_CONFIG_FILE);
		if (config != null && !Files.exists(file)) {
			try {
				Files.writeString(file, config.endsWith("\n") ? config : config + "\n", StandardCharsets.UTF_8);
			} catch (IOException e) {
				throw new UncheckedIOException("Cannot write " + file, e);
			}
		}
	}

	private List<String> command() {
		List<String> command = new ArrayList<>(List.of(binary.path().toString()));
		if (sentinelConfig != null) {
			command.addAll(List.of(directory.resolve(SENTINEL_CONFIG_FILE).toString(), "--sentinel"));
		}
		command.addAll(List.of(
				"--port", Integer.toString(port),
				"--bind", HOST,
				"--save", "",
				"--appendonly", "no",
				"--protected-mode", "no",
				"--daemonize", "no",
				"--dir", directory.toString(),
				"--logfile", ""));
		if (binary.majorVersion() >= 7) {
			command.addAll(List.of("--enable-debug-command", "local")); // DEBUG SLEEP etc. are off by default since 7.0
		}
		command.addAll(extraArgs);
		return command;
	}

	private String failure(String message) {
		StringBuilder text = new StringBuilder(message).append("\ncommand:");
		for (String arg : command()) {
			text.append(' ').append(arg.isEmpty() || arg.contains(" ") ? '"' + arg + '"' : arg);
		}
		return text.append("\noutput (tail):\n").append(logTail(LOG_TAIL_LINES)).toString();
	}

	private String logSince(long offset) {
		try (FileChannel channel = FileChannel.open(logFile, StandardOpenOption.READ)) {
			channel.position(offset);
			return new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
		} catch (IOException e) {
			return "";
		}
	}

	private Process requireRunning() {
		Process p = process;
		if (p == null || !p.isAlive()) {
			throw new IllegalStateException("Not running: " + this);
		}
		return p;
	}

	private void ensureOpen() {
		if (closed) {
			throw new IllegalStateException("Closed: redis-server on " + uri());
		}
	}

	private void awaitPortFree(long deadline) {
		while (true) {
			try (ServerSocket probe = new ServerSocket()) {
				probe.setReuseAddress(true);
				probe.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
				return;
			} catch (IOException e) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Port " + port + " still in use " + startTimeout + " after stopping redis-server", e);
				}
				sleep(20);
			}
		}
	}

	/** On Linux, waits (briefly) until the kernel reports the process as stopped. */
	private static void awaitStopped(Process p) {
		Path stat = Path.of("/proc", Long.toString(p.pid()), "stat");
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
		while (Files.isReadable(stat) && System.nanoTime() - deadline < 0) {
			try {
				String text = Files.readString(stat);
				char state = text.charAt(text.lastIndexOf(')') + 2);
				if (state == 'T' || state == 't') {
					return;
				}
			} catch (IOException | RuntimeException e) {
				return;
			}
			sleep(5);
		}
	}

	/**
	 * A free port for a cluster node: its bus listens on port + 10000, so that must be free too and
	 * the port at most 55535 (redis refuses higher ones; the OS hands out ports up to 60999).
	 */
	static int freeClusterPort() {
		for (int attempt = 0; attempt < 50; attempt++) {
			int port = freePort();
			if (port + CLUSTER_BUS_OFFSET > 65535) {
				continue;
			}
			try (ServerSocket bus = new ServerSocket()) {
				bus.bind(new InetSocketAddress(InetAddress.getByName(HOST), port + CLUSTER_BUS_OFFSET), 1);
				return port;
			} catch (IOException e) {
				// bus port taken: try another
			}
		}
		throw new IllegalStateException("No free port p on " + HOST + " with p + " + CLUSTER_BUS_OFFSET + " free too after 50 attempts");
	}

	private static int freePort() {
		for (int attempt = 0; attempt < 10; attempt++) {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
				int port = socket.getLocalPort();
				if (port != 6379) {
					return port;
				}
			} catch (IOException e) {
				throw new UncheckedIOException("Cannot find a free port on " + HOST, e);
			}
		}
		throw new IllegalStateException("The OS keeps handing out port 6379");
	}

	private static void signal(Process p, String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid()))
					.redirectErrorStream(true).redirectOutput(Redirect.DISCARD).start();
			if (!kill.waitFor(5, TimeUnit.SECONDS)) {
				kill.destroyForcibly();
				throw new IllegalStateException("kill -" + signal + " " + p.pid() + " did not finish within 5s");
			}
			if (kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + p.pid() + " exited with " + kill.exitValue());
			}
		} catch (IOException e) {
			throw new UncheckedIOException("Cannot run kill -" + signal, e);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending SIG" + signal, e);
		}
	}

	private static void signalQuietly(Process p, String signal) {
		try {
			signal(p, signal);
		} catch (RuntimeException ignored) {
			// SIGKILL in terminate() still works on a stopped process
		}
	}

	/** Waits {@code grace} for a voluntary exit, then SIGTERM, then SIGKILL. */
	private static void terminate(Process p, Duration grace) {
		if (waitFor(p, grace)) {
			return;
		}
		p.destroy();
		if (!waitFor(p, KILL_TIMEOUT)) {
			p.destroyForcibly();
			waitFor(p, KILL_TIMEOUT);
		}
	}

	private static boolean waitFor(Process p, Duration timeout) {
		try {
			return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			return !p.isAlive();
		}
	}

	/** Shutdown hook: no locks, so a thread stuck elsewhere cannot block JVM exit. */
	private static void destroyAll() {
		List<RedisServer> servers = List.copyOf(LIVE);
		for (RedisServer server : servers) {
			Process p = server.process;
			if (p != null && p.isAlive()) {
				if (server.paused) {
					signalQuietly(p, "CONT");
				}
				p.destroy();
			}
		}
		for (RedisServer server : servers) {
			Process p = server.process;
			if (p != null && !waitFor(p, KILL_TIMEOUT)) {
				p.destroyForcibly();
				waitFor(p, KILL_TIMEOUT);
			}
			deleteRecursively(server.directory);
		}
	}

	private static long size(Path file) {
		try {
			return Files.exists(file) ? Files.size(file) : 0;
		} catch (IOException e) {
			return 0;
		}
	}

	private static void clearExceptLog(Path dir) {
		try (Stream<Path> files = Files.list(dir)) {
			files.filter(file -> !file.getFileName().toString().equals("redis.log")).forEach(RedisServer::deleteRecursively);
		} catch (IOException | UncheckedIOException e) {
			// best effort: a leftover file of a failed start is harmless for most servers
		}
	}

	private static void deleteRecursively(Path dir) {
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
		} catch (IOException | UncheckedIOException e) {
			// best effort: it is a temp dir
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for redis-server", e);
		}
	}

	private static final class PortInUseException extends IllegalStateException {
		private static final long serialVersionUID = 1L;

		PortInUseException(String message) {
			super(message);
		}
	}

	/** Configures a server before starting it. */
	public static final class Builder {

		private @Nullable RedisBinary binary;
		private final List<String> args = new ArrayList<>();
		private @Nullable String sentinelConfig;
		private Duration startTimeout = DEFAULT_START_TIMEOUT;
		private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;

		private Builder() {
		}

		/** The binary to run; default {@link RedisBinary#detect()}. */
		public Builder binary(RedisBinary binary) {
			this.binary = Objects.requireNonNull(binary, "binary");
			return this;
		}

		/** Runs the binary shipped in the embedded-redis jar. */
		public Builder embedded() {
			return binary(RedisBinary.embedded());
		}

		/**
		 * Adds a config directive, e.g. {@code config("maxmemory", "10mb")}, passed as
		 * {@code --maxmemory 10mb} after the harness' own arguments (so it overrides them).
		 */
		public Builder config(String name, String... values) {
			args.add("--" + name);
			args.addAll(List.of(values));
			return this;
		}

		/**
		 * Runs {@code redis-server <dir>/sentinel.conf --sentinel} instead of a data server. The
		 * text (e.g. {@code sentinel monitor ...} lines; port and bind come from the harness) is
		 * written to the private directory before the first start only: the sentinel rewrites
		 * that file with what it learns, and a restarted sentinel must read it back.
		 */
		public Builder sentinel(String config) {
			this.sentinelConfig = Objects.requireNonNull(config, "config");
			return this;
		}

		/** How long a start or restart may take until the server answers; default 10 s. */
		public Builder startTimeout(Duration timeout) {
			this.startTimeout = requirePositive(timeout);
			return this;
		}

		/** Socket timeout of {@link RedisServer#execute(String...)}; default 5 s. */
		public Builder commandTimeout(Duration timeout) {
			this.commandTimeout = requirePositive(timeout);
			return this;
		}

		/** Starts the server; with {@code cluster-enabled yes}, on a port whose cluster bus port is free too. */
		public RedisServer start() {
			return launchNew(this, false, clusterEnabled() ? RedisServer::freeClusterPort : RedisServer::freePort);
		}

		private boolean clusterEnabled() {
			int index = args.lastIndexOf("--cluster-enabled");
			return index >= 0 && index + 1 < args.size() && args.get(index + 1).equalsIgnoreCase("yes");
		}

		private static Duration requirePositive(Duration timeout) {
			if (timeout.isNegative() || timeout.isZero()) {
				throw new IllegalArgumentException("Timeout must be positive: " + timeout);
			}
			return timeout;
		}
	}
}
