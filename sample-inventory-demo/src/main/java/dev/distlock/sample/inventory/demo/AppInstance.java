package dev.distlock.sample.inventory.demo;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;

import org.jspecify.annotations.Nullable;

/**
 * One app instance the demo runs: a separate JVM on a free loopback port, like one node behind a load balancer. It
 * writes its port to a file once Tomcat listens (no port probing races), logs to a file, and exits by itself when
 * the demo's JVM is gone, even if that was killed with SIGKILL.
 */
final class AppInstance implements AutoCloseable {

	/** Small heaps and the client compiler: several JVMs share two cores in CI. */
	private static final List<String> JVM_OPTIONS = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
			"-Dfile.encoding=UTF-8");

	private static final Duration POLL_INTERVAL = Duration.ofMillis(200);

	private static final Duration STOP_GRACE = Duration.ofSeconds(20);

	private final String name;

	private final Process process;

	private final Path logFile;

	private final Path portFile;

	private volatile int port = -1;

	private AppInstance(String name, Process process, Path logFile, Path portFile) {
		this.name = name;
		this.process = process;
		this.logFile = logFile;
		this.portFile = portFile;
	}

	/**
	 * Launch an instance.
	 * @param launcher how to start the application's JVM
	 * @param appArguments Spring Boot arguments ({@code --name=value})
	 * @param workDir where its log and port file go
	 */
	static AppInstance launch(String name, Launcher launcher, List<String> appArguments, Path workDir) {
		Path logFile = workDir.resolve(name + ".log");
		Path portFile = workDir.resolve(name + ".port");
		List<String> command = new ArrayList<>();
		command.add(javaExecutable());
		command.addAll(JVM_OPTIONS);
		command.addAll(launcher.arguments());
		command.addAll(appArguments);
		command.add("--inventory.demo.port-file=" + portFile);
		command.add("--inventory.demo.parent-pid=" + ProcessHandle.current().pid());
		ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile())
			.redirectErrorStream(true)
			.redirectOutput(logFile.toFile());
		try {
			return new AppInstance(name, builder.start(), logFile, portFile);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + name + ": " + String.join(" ", command), ex);
		}
	}

	/**
	 * Wait until the instance has written its port and its health endpoint reports UP (which includes Redis).
	 * @throws IllegalStateException if it exits or is not ready by the deadline, with the tail of its log
	 */
	void awaitReady(HttpClient http, long deadlineNanos) {
		String lastState = "not started yet";
		while (true) {
			if (!this.process.isAlive()) {
				throw failure("exited with code " + this.process.exitValue() + " while starting");
			}
			if (this.port < 0) {
				this.port = readPort();
			}
			if (this.port > 0) {
				try {
					HttpResponse<String> response = http.send(HttpRequest.newBuilder(baseUri().resolve("/actuator/health"))
						.timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
					if (response.statusCode() == 200 && response.body().contains("\"UP\"")) {
						return;
					}
					lastState = "health answered " + response.statusCode() + " " + response.body();
				}
				catch (IOException ex) {
					lastState = "health not reachable: " + ex;
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while waiting for " + this.name, ex);
				}
			}
			if (System.nanoTime() - deadlineNanos > 0) {
				throw failure("not ready in time (" + lastState + ")");
			}
			sleep(POLL_INTERVAL);
		}
	}

	String name() {
		return this.name;
	}

	long pid() {
		return this.process.pid();
	}

	/** {@code http://127.0.0.1:<port>}; only valid once {@link #awaitReady ready}. */
	URI baseUri() {
		return URI.create("http://127.0.0.1:" + this.port);
	}

	Path logFile() {
		return this.logFile;
	}

	/** The last lines of its log. */
	String logTail(int lines) {
		try {
			List<String> all = Files.readAllLines(this.logFile, StandardCharsets.UTF_8);
			return String.join(System.lineSeparator(), all.subList(Math.max(0, all.size() - lines), all.size()));
		}
		catch (IOException | UncheckedIOException ex) {
			return "<cannot read " + this.logFile + ": " + ex + ">";
		}
	}

	/** Stop it: SIGTERM (a graceful Spring Boot shutdown), then SIGKILL if it has not exited within the grace period. */
	@Override
	public void close() {
		if (!this.process.isAlive()) {
			return;
		}
		this.process.destroy();
		try {
			if (!this.process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
				this.process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			this.process.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	private int readPort() {
		try {
			String text = Files.readString(this.portFile, StandardCharsets.UTF_8).trim();
			return text.isEmpty() ? -1 : Integer.parseInt(text);
		}
		catch (NoSuchFileException ex) {
			return -1;
		}
		catch (IOException | NumberFormatException ex) {
			return -1; // being written; the next poll reads it
		}
	}

	private IllegalStateException failure(String what) {
		return new IllegalStateException(this.name + " (pid " + this.process.pid() + ") " + what + "; last lines of "
				+ this.logFile + ":" + System.lineSeparator() + logTail(30));
	}

	private static String javaExecutable() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted", ex);
		}
	}

	/**
	 * How to start an instance: {@link DemoInstance} from a jar built by this module ({@code -Dloader.main} picks it in
	 * the jar's PropertiesLauncher), or from a class path.
	 */
	record Launcher(List<String> arguments, String description) {

		/** Where the jar of this module keeps {@link DemoInstance}. */
		private static final String ENTRY = "BOOT-INF/classes/" + DemoInstance.class.getName().replace('.', '/') + ".class";

		/**
		 * The explicit jar if given; else the Spring Boot jar this JVM runs from; else this JVM's class path (an IDE,
		 * a test) with {@link DemoInstance} as the main class.
		 */
		static Launcher detect(@Nullable Path appJar) {
			if (appJar != null) {
				if (!Files.isRegularFile(appJar)) {
					throw new IllegalArgumentException("Option --app-jar: no such file " + appJar);
				}
				if (!hasDemoInstance(appJar)) {
					throw new IllegalArgumentException("Option --app-jar: " + appJar + " is not a jar of "
							+ "sample-inventory-demo (it has no " + DemoInstance.class.getName() + ")");
				}
				return jar(appJar);
			}
			String classPath = System.getProperty("java.class.path", "");
			String[] entries = classPath.split(File.pathSeparator);
			if (entries.length == 1 && entries[0].endsWith(".jar") && hasDemoInstance(Path.of(entries[0]))) {
				return jar(Path.of(entries[0]));
			}
			List<String> arguments = List.of("-cp", classPath, DemoInstance.class.getName());
			return new Launcher(arguments, "class path of this JVM (" + Arrays.stream(entries).filter((e) -> !e.isBlank())
				.count() + " entries), main class " + DemoInstance.class.getSimpleName());
		}

		private static Launcher jar(Path jar) {
			Path absolute = jar.toAbsolutePath().normalize();
			return new Launcher(List.of("-Dloader.main=" + DemoInstance.class.getName(), "-jar", absolute.toString()),
					absolute.toString());
		}

		private static boolean hasDemoInstance(Path jar) {
			try (JarFile file = new JarFile(jar.toFile())) {
				return file.getEntry(ENTRY) != null;
			}
			catch (IOException ex) {
				return false;
			}
		}

	}

}
