package dev.distlock.redis;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.distlock.core.Lease;
import dev.distlock.core.LockRequest;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * One application instance of {@link PermitsIntegrationTests}, in a JVM of its own, that takes one permit of a
 * semaphore, renewed by its watchdog, prints {@code HELD <owner id>} and then holds it until the test kills the
 * process. Arguments: {@code <port> <key> <permits> <ttl ms>}.
 */
public final class PermitJvmWorker {

	private PermitJvmWorker() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]);
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder().commandTimeout(LockTestSupport.COMMAND_TIMEOUT).build());
		factory.afterPropertiesSet();
		factory.start();
		RedisLockService service = RedisLockService.builder(factory).build();
		Lease lease = service
			.tryAcquire(LockRequest.of(args[1], Duration.ofMillis(Long.parseLong(args[3])), Duration.ofSeconds(60))
				.permits(Integer.parseInt(args[2])))
			.orElseThrow();
		System.out.println("HELD " + lease.owner());
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE); // until killed: the permit is never released
	}

	/**
	 * Start a worker JVM on the test's class path, its output (both streams) into {@code log}.
	 * @param log the output file
	 * @param args the worker's arguments
	 * @return the process
	 * @throws IOException if the JVM cannot start
	 */
	static Process start(Path log, String... args) throws IOException {
		String java = ProcessHandle.current().info().command().orElse("java");
		List<String> command = new java.util.ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
				"-Xmx128m", "-XX:TieredStopAtLevel=1", "-Xshare:auto", PermitJvmWorker.class.getName()));
		command.addAll(List.of(args));
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
	}

	/** {@return the owner id of the permit the worker holds, once it printed it, else null} */
	static String heldOwner(Path log) throws IOException {
		return Files.readAllLines(log).stream().filter(line -> line.startsWith("HELD ")).map(line -> line.substring(5))
			.findFirst().orElse(null);
	}

}
