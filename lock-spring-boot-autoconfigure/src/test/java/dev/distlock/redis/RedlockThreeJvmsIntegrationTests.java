package dev.distlock.redis;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three JVMs, each one Redlock engine instance over the same five redis-server processes, increment one counter by
 * read-modify-write in a sixth server (the storage the lock protects), each write fenced by the lease's token: no
 * update is lost, no write is refused, and the accepted tokens never go backwards.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RedlockThreeJvmsIntegrationTests {

	private static final int JVMS = 3;

	private static final int THREADS = 2;

	private static final int INCREMENTS = 15;

	private RedlockNodesFixture nodes;

	private RedisServer storage;

	private final List<Process> processes = new ArrayList<>();

	@BeforeEach
	void start() {
		this.nodes = new RedlockNodesFixture(5);
		this.storage = RedisServer.start();
	}

	@AfterEach
	void stop() {
		this.processes.forEach(Process::destroyForcibly);
		this.nodes.close();
		this.storage.close();
	}

	@Test
	void threeJvmsUnderContentionLoseNoUpdateAndTheirTokensNeverGoBackwards(@TempDir Path dir) throws Exception {
		Path startFile = dir.resolve("go");
		String java = ProcessHandle.current().info().command().orElse("java");
		for (int i = 0; i < JVMS; i++) {
			List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
					"-Xmx256m", "-XX:TieredStopAtLevel=1", RedlockJvmWorker.class.getName(),
					Integer.toString(this.storage.port()), Integer.toString(THREADS), Integer.toString(INCREMENTS),
					startFile.toString()));
			this.nodes.servers.forEach(server -> command.add(Integer.toString(server.port())));
			File log = dir.resolve("jvm-" + i + ".log").toFile();
			this.processes.add(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start());
		}
		Files.createFile(startFile);
		for (int i = 0; i < JVMS; i++) {
			Process process = this.processes.get(i);
			Path log = dir.resolve("jvm-" + i + ".log");
			assertThat(process.waitFor(150, TimeUnit.SECONDS)).as("JVM %d finished", i).isTrue();
			String output = Files.readString(log);
			assertThat(process.exitValue()).as("JVM %d exit; output:%n%s", i, output).isZero();
			assertThat(output).contains("DONE rejected=0");
		}
		try (LockTestSupport support = LockTestSupport.forServer(this.storage)) {
			FencedStore store = new FencedStore(support.template());
			long[] totals = store.totals("jvm-counter");
			int expected = JVMS * THREADS * INCREMENTS;
			assertThat(totals[0]).as("accepted writes").isEqualTo(expected);
			assertThat(totals[1]).as("rejected writes").isZero();
			assertThat(totals[2]).as("counter").isEqualTo(expected);
			assertThat(store.firstBackwardStep("jvm-counter", new long[1])).isEqualTo(-1);
		}
	}

}
