package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs {@link Probe} in a child JVM that exits without closing its servers. */
class ShutdownHookTest {

	@Test
	void jvmExitKillsRunningAndPausedServers() throws Exception {
		Path java = Path.of(System.getProperty("java.home"), "bin", "java");
		Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"), Probe.class.getName())
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
		String[] lines = new String[2];
		try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
			lines[0] = out.readLine();
			lines[1] = out.readLine();
		}
		assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
		assertThat(child.exitValue()).isZero();

		for (String line : lines) {
			assertThat(line).isNotNull();
			String[] parts = line.split(" ", 2);
			long pid = Long.parseLong(parts[0]);
			// a deadline with room for a loaded machine: the process is gone once the kernel has reaped it
			await().atMost(Duration.ofSeconds(20)).until(() -> ProcessHandle.of(pid).filter(ProcessHandle::isAlive).isEmpty());
			assertThat(Path.of(parts[1])).doesNotExist();
		}
	}

	/** Starts a running and a paused server, prints "pid dir" for each, and exits. */
	static final class Probe {
		public static void main(String[] args) {
			RedisServer running = RedisServer.start();
			RedisServer paused = RedisServer.start();
			paused.pause();
			System.out.println(running.pid() + " " + running.directory());
			System.out.println(paused.pid() + " " + paused.directory());
			System.out.flush();
		}
	}
}
