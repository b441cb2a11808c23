package dev.distlock.sample.inventory.demo;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.awaitility.core.ConditionTimeoutException;
import org.awaitility.core.TerminalFailureException;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The demo as it runs for a user, in a JVM of its own, interrupted while its instances sell: Ctrl-C or a
 * {@code kill} must end it promptly and leave nothing running, neither the app instances' JVMs nor its private
 * {@code redis-server}. The processes are the demo JVM's descendants, captured while purchases are under way, and
 * must include the pids the demo prints.
 */
class InventoryDemoShutdownIntegrationTests {

	/**
	 * Long enough that a signal always lands mid-run: every purchase pauses 20 ms, so 4 clients make at most 200
	 * purchases a second, and the three modes need well over a minute.
	 */
	private static final List<String> SLOW_DEMO = List.of("--stock", "4000", "--attempts", "4000", "--clients", "4",
			"--delay", "20ms");

	/**
	 * The first progress line of the first mode (stderr is no terminal, so the progress prints quarters). The line
	 * shows the share done when a progress tick first sees a quarter crossed, so 26% or 27% as often as 25%.
	 */
	private static final Pattern QUARTER_DONE = Pattern.compile("(?m)^  none +\\d+%");

	/** How the demo is stopped. */
	enum Stop {

		/** {@code kill -INT <demo>}: the demo's shutdown hook alone must stop the instances and Redis. */
		SIGINT(130),

		/** {@code kill <demo>} ({@link Process#destroy()}), as a service manager or CI timeout would. */
		SIGTERM(143),

		/** Ctrl-C in a terminal: SIGINT to the whole foreground process group, instances and Redis included. */
		CTRL_C(130);

		/** 128 + the signal's number: what a JVM ended by the signal exits with. */
		final int exitCode;

		Stop(int exitCode) {
			this.exitCode = exitCode;
		}

	}

	@ParameterizedTest
	@EnumSource
	void signalWhilePurchasesAreUnderWayEndsTheDemoAndEverythingItStarted(Stop stop, @TempDir Path dir)
			throws Exception {
		Path out = dir.resolve("demo.out");
		Path err = dir.resolve("demo.err");
		Process demo = launch(stop, out, err);
		List<ProcessHandle> started = List.of();
		try {
			try {
				await("the demo's first mode a quarter done").atMost(Duration.ofMinutes(5))
					.pollInterval(Duration.ofMillis(200))
					.failFast("the demo exited early", () -> !demo.isAlive())
					.until(() -> QUARTER_DONE.matcher(read(err)).find());
			}
			catch (ConditionTimeoutException | TerminalFailureException ex) {
				throw new AssertionError(ex.getMessage() + "; stdout:%n%s%nstderr:%n%s".formatted(read(out), read(err)), ex);
			}
			started = demo.descendants().toList();
			if (stop == Stop.CTRL_C) {
				assertThat(processGroup(demo.pid())).as("the demo leads its own process group").isEqualTo(demo.pid());
			}
			assertThat(ignoresSigint(demo.pid())).as("SIGINT is ignored in the demo's JVM").isFalse();
			List<Long> printedPids = printedPids(read(out));
			assertThat(printedPids).as("pids of Redis and the 2 instances in:%n%s", read(out)).hasSize(3);
			assertThat(started.stream().map(ProcessHandle::pid)).containsAll(printedPids);
			Path logs = Path.of(match(read(out), "(?m)^  logs: +(\\S+)$"));
			assertThat(logs).isDirectory();

			long signalled = System.nanoTime();
			signal(stop, demo);

			assertThat(demo.waitFor(2, TimeUnit.MINUTES)).as("demo exited after %s; stderr:%n%s", stop, read(err)).isTrue();
			Duration stopping = Duration.ofNanos(System.nanoTime() - signalled);
			String output = read(out) + read(err);
			assertThat(demo.exitValue()).as(output).isEqualTo(stop.exitCode);
			assertThat(started.stream().filter(ProcessHandle::isAlive).map(InventoryDemoShutdownIntegrationTests::describe))
				.as("processes the demo started and left running (it exited %d ms after %s)", stopping.toMillis(), stop)
				.isEmpty();
			assertThat(read(err)).contains("Interrupted: stopping the app instances and Redis")
				.doesNotContain("The demo could not run");
			assertThat(logs).as("the instances' logs").doesNotExist();
		}
		finally {
			// whatever is left after a failure; the demo last, so that its children are still its descendants
			List<ProcessHandle> leftovers = Stream.of(started.stream(), demo.descendants(), Stream.of(demo.toHandle()))
				.flatMap((processes) -> processes).toList();
			leftovers.forEach(ProcessHandle::destroyForcibly);
			demo.waitFor(30, TimeUnit.SECONDS);
		}
	}

	/**
	 * Start the demo from this test's class path; its instances start from the same class path. With Ctrl-C it gets
	 * a session and process group of its own, as a terminal gives a command, so that the group signal stays there.
	 */
	private static Process launch(Stop stop, Path out, Path err) throws IOException {
		List<String> command = new ArrayList<>();
		if (stop == Stop.CTRL_C) {
			assumeTrue(onPath("setsid"), "Ctrl-C needs setsid(1) to give the demo its own process group");
			command.add("setsid");
		}
		if (ignoresSigint(ProcessHandle.current().pid())) {
			// A build started in the background of a shell without job control ignores SIGINT, and children inherit
			// that: undo it, as a terminal's foreground job would have it (GNU env).
			command.addAll(List.of("env", "--default-signal=INT"));
		}
		command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m",
				"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
				InventoryDemo.class.getName()));
		command.addAll(SLOW_DEMO);
		return new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
	}

	private static void signal(Stop stop, Process demo) throws IOException, InterruptedException {
		switch (stop) {
			case SIGINT -> kill("-INT", Long.toString(demo.pid()));
			case SIGTERM -> demo.destroy();
			case CTRL_C -> kill("-INT", "--", "-" + demo.pid());
		}
	}

	private static void kill(String... arguments) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("kill"));
		command.addAll(List.of(arguments));
		Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
		assertThat(kill.waitFor(30, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
		assertThat(kill.exitValue()).as(String.join(" ", command) + ": "
				+ new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isZero();
	}

	/** The pids in the demo's header: its Redis' and each instance's ({@code pid 123}). */
	private static List<Long> printedPids(String output) {
		List<Long> pids = new ArrayList<>();
		Matcher matcher = Pattern.compile("\\bpid (\\d+)\\)").matcher(output);
		while (matcher.find()) {
			pids.add(Long.parseLong(matcher.group(1)));
		}
		return pids;
	}

	private static String match(String text, String regex) {
		Matcher matcher = Pattern.compile(regex).matcher(text);
		assertThat(matcher.find()).as("%s in:%n%s", regex, text).isTrue();
		return matcher.group(1);
	}

	/** From {@code /proc}; false where there is none (the signal then tells). */
	private static boolean ignoresSigint(long pid) throws IOException {
		Path status = Path.of("/proc", Long.toString(pid), "status");
		if (!Files.isReadable(status)) {
			return false;
		}
		String mask = match(Files.readString(status), "(?m)^SigIgn:\\s*([0-9a-f]+)$");
		return (Long.parseUnsignedLong(mask, 16) & (1L << (2 - 1))) != 0;
	}

	/** The process group, from {@code /proc/<pid>/stat}: the third field after the command's closing parenthesis. */
	private static long processGroup(long pid) throws IOException {
		Path stat = Path.of("/proc", Long.toString(pid), "stat");
		assumeTrue(Files.isReadable(stat), "needs /proc to check the process group");
		String text = Files.readString(stat);
		return Long.parseLong(text.substring(text.lastIndexOf(')') + 2).split(" ")[2]);
	}

	private static boolean onPath(String program) {
		return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
			.anyMatch((directory) -> !directory.isEmpty() && Files.isExecutable(Path.of(directory, program)));
	}

	/** The pid and the start of the command line (a JVM's class path is long). */
	private static String describe(ProcessHandle process) {
		String command = process.info().commandLine().orElse("?");
		return process.pid() + " " + ((command.length() > 100) ? command.substring(0, 100) + "..." : command);
	}

	private static String read(Path file) {
		try {
			return Files.readString(file, StandardCharsets.UTF_8);
		}
		catch (NoSuchFileException ex) {
			return "";
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
