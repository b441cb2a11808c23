package dev.distlock.test.redis;

import static dev.distlock.test.redis.ServerSupport.KILL_TIMEOUT;
import static dev.distlock.test.redis.ServerSupport.signal;
import static dev.distlock.test.redis.ServerSupport.signalQuietly;
import static dev.distlock.test.redis.ServerSupport.sleep;
import static dev.distlock.test.redis.ServerSupport.terminate;
import static dev.distlock.test.redis.ServerSupport.waitFor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The {@code redis-server} process behind one {@link RedisServer}: its command line, its launch and
 * readiness check, and the signals that stop, kill, freeze and continue it.
 *
 * <p>Concurrency: the methods that launch or signal are called only under the owning
 * {@link RedisServer}'s monitor (its methods are {@code synchronized}), so launches, stops and
 * signals never interleave. {@code process} and {@code paused} are volatile because status queries
 * and the JVM shutdown hook ({@link #signalEnd()}, {@link #awaitEnd()}) read them without that lock,
 * so that a thread stuck elsewhere cannot block JVM exit.
 */
final class ServerProcess {

	private static final String HOST = RedisServer.HOST;
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);
	private static final int LOG_TAIL_LINES = 40;
	private static final String SENTINEL_CONFIG_FILE = "sentinel.conf";

	/** The server, named in errors. */
	private final RedisServer owner;
	private final RedisBinary binary;
	private final int port;
	private final Path directory;
	private final Path logFile;
	private final List<String> extraArgs;
	private final @Nullable String sentinelConfig;
	private final Duration startTimeout;
	/** Runs once a launched process exists, before waiting for it to answer: the shutdown hook must know it. */
	private final Runnable launched;
	private volatile @Nullable Process process;
	private volatile boolean paused;

	ServerProcess(RedisServer owner, RedisBinary binary, int port, Path directory, Path logFile, List<String> extraArgs,
			@Nullable String sentinelConfig, Duration startTimeout, Runnable launched) {
		this.owner = owner;
		this.binary = binary;
		this.port = port;
		this.directory = directory;
		this.logFile = logFile;
		this.extraArgs = List.copyOf(extraArgs);
		this.sentinelConfig = sentinelConfig;
		this.startTimeout = startTimeout;
		this.launched = launched;
	}

	boolean isSentinel() {
		return sentinelConfig != null;
	}

	boolean isRunning() {
		Process p = process;
		return p != null && p.isAlive();
	}

	boolean isPaused() {
		return paused && isRunning();
	}

	long pid() {
		return requireRunning().pid();
	}

	/** Starts the process and waits until it answers on the port; see {@link RedisServer#restart()}. */
	void launch() {
		long logOffset = ServerSupport.size(logFile);
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
		launched.run();
		long deadline = System.nanoTime() + startTimeout.toNanos();
		while (true) {
			if (!p.isAlive()) {
				process = null;
				String message = "redis-server exited with code " + p.exitValue() + " while starting on " + HOST + ":" + port;
				if (ServerSupport.logSince(logFile, logOffset).contains("Address already in use")) {
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

	/** See {@link RedisServer#stop()}. */
	void stop() {
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

	/** See {@link RedisServer#kill()}. */
	void kill() {
		Process p = process;
		if (p == null) {
			return;
		}
		p.destroyForcibly(); // SIGKILL, which also ends a SIGSTOPped process
		if (!waitFor(p, STOP_TIMEOUT)) {
			// still tracked, so close() and the shutdown hook try again
			throw new IllegalStateException("redis-server " + p.pid() + " on " + owner.uri() + " survived SIGKILL for " + STOP_TIMEOUT);
		}
		process = null;
		paused = false;
	}

	/** See {@link RedisServer#restart()}. */
	void restart() {
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

	/** See {@link RedisServer#pause()}. */
	void pause() {
		Process p = requireRunning();
		if (!paused) {
			signal(p, "STOP");
			paused = true;
			ServerSupport.awaitStopped(p);
		}
	}

	/** See {@link RedisServer#resume()}. */
	void resume() {
		Process p = process;
		if (paused && p != null && p.isAlive()) {
			signal(p, "CONT");
		}
		paused = false;
	}

	/** Shutdown hook, first pass over all servers: SIGTERM (after SIGCONT if paused); takes no lock. */
	void signalEnd() {
		Process p = process;
		if (p != null && p.isAlive()) {
			if (paused) {
				signalQuietly(p, "CONT");
			}
			p.destroy();
		}
	}

	/** Shutdown hook, second pass: waits for the exit, and SIGKILLs a process that does not; takes no lock. */
	void awaitEnd() {
		Process p = process;
		if (p != null && !waitFor(p, KILL_TIMEOUT)) {
			p.destroyForcibly();
			waitFor(p, KILL_TIMEOUT);
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
		return text.append("\noutput (tail):\n").append(ServerSupport.logTail(logFile, LOG_TAIL_LINES)).toString();
	}

	private Process requireRunning() {
		Process p = process;
		if (p == null || !p.isAlive()) {
			throw new IllegalStateException("Not running: " + owner);
		}
		return p;
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

	/** Redis lost a bind race for its port: the caller may try again, on the same port or another. */
	static final class PortInUseException extends IllegalStateException {
		private static final long serialVersionUID = 1L;

		PortInUseException(String message) {
			super(message);
		}
	}
}
