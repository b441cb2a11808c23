package dev.distlock.test.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
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
 *
 * <p>The process itself (command line, launch, signals) is {@link ServerProcess}'s; ports, exits
 * and temp files are {@link ServerSupport}'s. This class holds the server's identity, the registry
 * the shutdown hook works from, and the public API.
 */
public final class RedisServer implements AutoCloseable {

	/** The only address servers bind to. */
	public static final String HOST = "127.0.0.1";

	private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(10);
	private static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);
	private static final int PORT_ATTEMPTS = 5;

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
	private final Duration commandTimeout;
	private final boolean sharedInstance;
	/** Launched and signalled only under this server's monitor. */
	private final ServerProcess process;
	private boolean closed;

	private RedisServer(Builder builder, RedisBinary binary, int port, Path directory, boolean sharedInstance) {
		this.binary = binary;
		this.port = port;
		this.directory = directory;
		this.logFile = directory.resolve("redis.log");
		this.commandTimeout = builder.commandTimeout;
		this.sharedInstance = sharedInstance;
		this.process = new ServerProcess(this, binary, port, directory, logFile, builder.args, builder.sentinelConfig,
				builder.startTimeout, () -> LIVE.add(this));
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
		return ServerSupport.startAll(builders);
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
		return ServerSupport.logTail(logFile, lines);
	}

	/** The process id of the running server. */
	public long pid() {
		return process.pid();
	}

	public boolean isRunning() {
		return process.isRunning();
	}

	public boolean isPaused() {
		return process.isPaused();
	}

	/** Whether this runs {@code redis-server --sentinel} ({@link Builder#sentinel(String)}). */
	public boolean isSentinel() {
		return process.isSentinel();
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
		process.stop();
	}

	/**
	 * Kills the process with SIGKILL, as a crash or power loss would: no {@code SHUTDOWN}, so a
	 * cluster node or sentinel cannot tell its peers, and nothing is written on the way out.
	 * Idempotent; {@link #restart()} can follow.
	 */
	public synchronized void kill() {
		process.kill();
	}

	/**
	 * Stops the server if needed and starts a fresh process on the same port and directory, with no
	 * data (files the server wrote in {@link #directory()} stay). Waits until the port is free and
	 * the new process answers.
	 */
	public synchronized void restart() {
		ensureOpen();
		process.restart();
	}

	/** Freezes the process with SIGSTOP: connections are accepted but never answered. */
	public synchronized void pause() {
		process.pause();
	}

	/** Continues a paused process with SIGCONT; does nothing if not paused. */
	public synchronized void resume() {
		process.resume();
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
				ServerSupport.deleteRecursively(directory);
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
		resume(); // does nothing unless paused
		if (!isRunning()) {
			restart();
		}
	}
	private static RedisServer launchNew(Builder builder, boolean sharedInstance) {
		return launchNew(builder, sharedInstance, ServerSupport::freePort);
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
		ServerProcess.PortInUseException lastBindFailure = null;
		for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
			RedisServer server = new RedisServer(builder, binary, ports.getAsInt(), directory, sharedInstance);
			try {
				synchronized (server) { // ServerProcess launches and signals only under its server's monitor
					server.process.launch();
				}
				return server;
			} catch (ServerProcess.PortInUseException e) {
				lastBindFailure = e; // another process took the port between our probe and redis' bind
				LIVE.remove(server);
				ServerSupport.clearExceptLog(directory); // e.g. the nodes.conf of a cluster node that could not bind its bus port
			} catch (RuntimeException e) {
				LIVE.remove(server);
				ServerSupport.deleteRecursively(directory);
				throw e;
			}
		}
		ServerSupport.deleteRecursively(directory);
		throw new IllegalStateException("No free port after " + PORT_ATTEMPTS + " attempts", lastBindFailure);
	}

	private void ensureOpen() {
		if (closed) {
			throw new IllegalStateException("Closed: redis-server on " + uri());
		}
	}

	/**
	 * A free port for a cluster node: its bus listens on port + 10000, so that must be free too and
	 * the port at most 55535 (redis refuses higher ones; the OS hands out ports up to 60999).
	 */
	static int freeClusterPort() {
		return ServerSupport.freeClusterPort();
	}

	/** Shutdown hook: no locks, so a thread stuck elsewhere cannot block JVM exit. */
	private static void destroyAll() {
		List<RedisServer> servers = List.copyOf(LIVE);
		for (RedisServer server : servers) {
			server.process.signalEnd();
		}
		for (RedisServer server : servers) {
			server.process.awaitEnd();
			ServerSupport.deleteRecursively(server.directory);
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
			return launchNew(this, false, clusterEnabled() ? ServerSupport::freeClusterPort : ServerSupport::freePort);
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
