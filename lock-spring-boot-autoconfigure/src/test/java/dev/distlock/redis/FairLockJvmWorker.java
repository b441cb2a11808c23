package dev.distlock.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One application instance of {@link FairLockScenarioIntegrationTests}, run in a JVM of its own: its own
 * {@link RedisLockService} on the test's redis-server, so that a test can kill a waiting process or make several
 * processes contend. It prints {@code CLIENT <client id>} once its service is built. Arguments:
 * <ul>
 * <li>{@code queue <port> <key> <wait ms> <entry ttl ms>}: one fair acquisition that waits (the test kills the process while it
 * waits in the queue);</li>
 * <li>{@code fifo <port> <key> <process> <acquisitions> <start-file>}: once the start file exists, that many fair
 * acquisitions one after another, each recorded as {@code <process> <ticket> <order> <token>} on the list
 * {@link #FIFO_LOG}: the ticket an {@code INCR} of {@link #FIFO_CLOCK} just before the acquire call, the order an
 * {@code INCR} of {@link #FIFO_ORDER} inside the critical section.</li>
 * </ul>
 */
public final class FairLockJvmWorker {

	/** The logical clock of the FIFO scenario: tickets and the test's snapshots of the queue both increment it. */
	static final String FIFO_CLOCK = "fifo:clock";

	/** The order of entering the critical section in the FIFO scenario. */
	static final String FIFO_ORDER = "fifo:order";

	/** The record of every acquisition of the FIFO scenario. */
	static final String FIFO_LOG = "fifo:log";

	private static final Duration TTL = Duration.ofSeconds(30);

	private FairLockJvmWorker() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[1]);
		String key = args[2];
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder().commandTimeout(LockTestSupport.COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		Duration entryTtl = args[0].equals("queue") ? Duration.ofMillis(Long.parseLong(args[4]))
				: FairLockScenarioIntegrationTests.ENTRY_TTL;
		RedisLockService service = FairLockScenarioIntegrationTests.fairBuilder(RedisLockService.builder(factory), entryTtl)
			.build();
		try {
			System.out.println("CLIENT " + service.clientId());
			System.out.flush();
			if (args[0].equals("queue")) {
				Optional<Lease> lease = service
					.tryAcquire(FairLockScenarioIntegrationTests.request(key, TTL, Duration.ofMillis(Long.parseLong(args[3]))));
				System.out.println("ACQUIRED " + lease.isPresent());
				lease.ifPresent(Lease::release);
			}
			else {
				fifo(service, LockTestSupport.template(factory), key, args[3], Integer.parseInt(args[4]), Path.of(args[5]));
				System.out.println("DONE");
			}
		}
		finally {
			service.close();
			factory.destroy();
		}
	}

	/**
	 * Start a worker JVM on the test's class path, its output (both streams) into {@code log}.
	 * @param log the output file
	 * @param mode the lock mode the worker acquires in
	 * @param args the worker's arguments
	 * @return the process
	 * @throws IOException if the JVM cannot start
	 */
	static Process start(Path log, LockMode mode, String... args) throws IOException {
		String java = ProcessHandle.current().info().command().orElse("java");
		List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"), "-Xmx128m",
				"-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Ddistlock.test.scenario-mode=" + mode,
				FairLockJvmWorker.class.getName()));
		command.addAll(List.of(args));
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
	}

	/**
	 * {@return the client id a worker printed, or null before it did}
	 * @param log the worker's output file
	 * @throws IOException if the file cannot be read
	 */
	static @Nullable String clientId(Path log) throws IOException {
		if (!Files.exists(log)) {
			return null;
		}
		return Files.readAllLines(log).stream()
			.filter(line -> line.startsWith("CLIENT "))
			.map(line -> line.substring("CLIENT ".length()))
			.findFirst()
			.orElse(null);
	}

	private static void fifo(RedisLockService service, StringRedisTemplate redis, String key, String process,
			int acquisitions, Path startFile) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (!Files.exists(startFile)) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("No start signal");
			}
			Thread.sleep(10); // a cross-process start signal: a file the test creates
		}
		LockRequest request = FairLockScenarioIntegrationTests.request(key, TTL, Duration.ofSeconds(60));
		for (int i = 0; i < acquisitions; i++) {
			Long ticket = redis.opsForValue().increment(FIFO_CLOCK);
			try (Lease lease = service.acquire(request)) {
				Long order = redis.opsForValue().increment(FIFO_ORDER);
				redis.opsForList().rightPush(FIFO_LOG, process + " " + ticket + " " + order + " " + lease.fencingToken());
			}
		}
	}

}
