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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What {@link RedisServer} needs from the operating system, apart from the server process itself:
 * free ports, POSIX signals and exits with deadlines, and its temp files. Stateless, so that the
 * server classes keep only their own state and its invariants.
 */
final class ServerSupport {

	static final Duration KILL_TIMEOUT = Duration.ofSeconds(2);
	private static final String HOST = RedisServer.HOST;
	private static final int CLUSTER_BUS_OFFSET = 10000;

	private ServerSupport() {
	}

	/**
	 * Starts one server per builder, all at once: on a loaded machine most of a start is waiting
	 * for the new process to answer, and a topology need not wait for its nodes one by one. If
	 * any start fails, the others are closed and the first failure is thrown.
	 */
	static List<RedisServer> startAll(List<RedisServer.Builder> builders) {
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

	/** On Linux, waits (briefly) until the kernel reports the process as stopped. */
	static void awaitStopped(Process p) {
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

	static int freePort() {
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


	static void signal(Process p, String signal) {
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

	static void signalQuietly(Process p, String signal) {
		try {
			signal(p, signal);
		} catch (RuntimeException ignored) {
			// SIGKILL in terminate() still works on a stopped process
		}
	}

	/** Waits {@code grace} for a voluntary exit, then SIGTERM, then SIGKILL. */
	static void terminate(Process p, Duration grace) {
		if (waitFor(p, grace)) {
			return;
		}
		p.destroy();
		if (!waitFor(p, KILL_TIMEOUT)) {
			p.destroyForcibly();
			waitFor(p, KILL_TIMEOUT);
		}
	}

	static boolean waitFor(Process p, Duration timeout) {
		try {
			return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			return !p.isAlive();
		}
	}


	static long size(Path file) {
		try {
			return Files.exists(file) ? Files.size(file) : 0;
		} catch (IOException e) {
			return 0;
		}
	}

	static void clearExceptLog(Path dir) {
		try (Stream<Path> files = Files.list(dir)) {
			files.filter(file -> !file.getFileName().toString().equals("redis.log")).forEach(ServerSupport::deleteRecursively);
		} catch (IOException | UncheckedIOException e) {
			// best effort: a leftover file of a failed start is harmless for most servers
		}
	}

	static void deleteRecursively(Path dir) {
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
		} catch (IOException | UncheckedIOException e) {
			// best effort: it is a temp dir
		}
	}

	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for redis-server", e);
		}
	}


	/** The last {@code lines} lines of {@code logFile}. */
	static String logTail(Path logFile, int lines) {
		try {
			String[] all = new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8).split("\r?\n");
			return String.join("\n", Arrays.asList(all).subList(Math.max(0, all.length - lines), all.length));
		} catch (NoSuchFileException e) {
			return "";
		} catch (IOException e) {
			return "<cannot read " + logFile + ": " + e + ">";
		}
	}

	/** What {@code logFile} got after {@code offset}: the output of the latest launch. */
	static String logSince(Path logFile, long offset) {
		try (FileChannel channel = FileChannel.open(logFile, StandardOpenOption.READ)) {
			channel.position(offset);
			return new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
		} catch (IOException e) {
			return "";
		}
	}
}
