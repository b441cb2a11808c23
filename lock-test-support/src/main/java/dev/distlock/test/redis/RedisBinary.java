package dev.distlock.test.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A {@code redis-server} executable and where it came from.
 *
 * <p>Tests should run against the Redis the developer or CI installed, but must still work on a
 * bare machine, so {@link #detect()} falls back to the binary shipped inside the
 * {@code com.github.codemonstur:embedded-redis} jar. Resolution order:
 * <ol>
 *   <li>{@value #FORCE_PROPERTY}{@code =embedded} (or env {@value #FORCE_ENV}): the embedded binary;
 *   <li>system property {@value #PATH_PROPERTY} or env {@value #PATH_ENV}: that path;
 *   <li>{@code redis-server} on {@code PATH};
 *   <li>the embedded binary for this OS/architecture, extracted once per JVM to a temp file.
 * </ol>
 *
 * @param path the executable
 * @param source how it was found
 */
public record RedisBinary(Path path, Source source) {

	/** System property naming an explicit {@code redis-server} path. */
	public static final String PATH_PROPERTY = "distlock.redis-server";
	/** Environment variable naming an explicit {@code redis-server} path. */
	public static final String PATH_ENV = "DISTLOCK_REDIS_SERVER";
	/** System property; the value {@code embedded} forces the embedded binary. */
	public static final String FORCE_PROPERTY = "distlock.redis-binary";
	/** Environment variable; the value {@code embedded} forces the embedded binary. */
	public static final String FORCE_ENV = "DISTLOCK_REDIS_BINARY";

	private static final Pattern VERSION = Pattern.compile("\\bv=(\\d+(?:\\.\\d+)*)");
	private static final Map<Path, String> VERSIONS = new ConcurrentHashMap<>();
	private static @Nullable RedisBinary embedded;

	/** Where a binary came from. */
	public enum Source {
		/** Named by {@value #PATH_PROPERTY}, {@value #PATH_ENV} or {@link #explicit(Path)}. */
		EXPLICIT,
		/** Found as {@code redis-server} on {@code PATH}. */
		PATH,
		/** Extracted from the embedded-redis jar. */
		EMBEDDED
	}

	public RedisBinary {
		if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
			throw new IllegalArgumentException("Not an executable file: " + path);
		}
	}

	/** Resolves the binary to use as described in the class comment. */
	public static RedisBinary detect() {
		String force = setting(FORCE_PROPERTY, FORCE_ENV);
		if (force != null && !force.isBlank()) {
			if (!force.trim().equalsIgnoreCase("embedded")) {
				throw new IllegalArgumentException(FORCE_PROPERTY + " must be 'embedded' but was '" + force + "'");
			}
			return embedded();
		}
		String explicit = setting(PATH_PROPERTY, PATH_ENV);
		if (explicit != null && !explicit.isBlank()) {
			return explicit(Path.of(explicit.trim()));
		}
		return onPath().orElseGet(RedisBinary::embedded);
	}

	/** An explicitly chosen executable. */
	public static RedisBinary explicit(Path path) {
		return new RedisBinary(path.toAbsolutePath(), Source.EXPLICIT);
	}

	/** The first executable {@code redis-server} on {@code PATH}, if any. */
	public static Optional<RedisBinary> onPath() {
		String pathEnv = System.getenv("PATH");
		if (pathEnv == null) {
			return Optional.empty();
		}
		for (String dir : pathEnv.split(java.io.File.pathSeparator)) {
			if (dir.isEmpty()) {
				continue;
			}
			Path candidate = Path.of(dir, "redis-server");
			if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
				return Optional.of(new RedisBinary(candidate.toAbsolutePath(), Source.PATH));
			}
		}
		return Optional.empty();
	}

	/** The binary shipped in the embedded-redis jar, extracted (once per JVM) to a temp file. */
	public static synchronized RedisBinary embedded() {
		if (embedded == null) {
			embedded = new RedisBinary(extract(embeddedResource()), Source.EMBEDDED);
		}
		return embedded;
	}

	/** The version reported by {@code redis-server --version}, e.g. {@code 7.0.15}; cached per path. */
	public String version() {
		return VERSIONS.computeIfAbsent(path, RedisBinary::readVersion);
	}

	/** The major version, e.g. {@code 7}. */
	public int majorVersion() {
		String version = version();
		int dot = version.indexOf('.');
		return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
	}

	private static @Nullable String setting(String property, String env) {
		String value = System.getProperty(property);
		return value != null ? value : System.getenv(env);
	}

	private static String embeddedResource() {
		String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
		boolean x64 = arch.equals("amd64") || arch.equals("x86_64");
		boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
		if (os.contains("linux") && x64) {
			return "redis-server-6.2.6-v5-linux-amd64";
		}
		if (os.contains("linux") && arm64) {
			return "redis-server-6.2.7-linux-arm64";
		}
		if (os.contains("linux") && arch.matches("x86|i[3-6]86")) {
			return "redis-server-6.2.7-linux-386";
		}
		if (os.contains("mac") && x64) {
			return "redis-server-6.2.6-v5-darwin-amd64";
		}
		if (os.contains("mac") && arm64) {
			return "redis-server-6.2.6-v5-darwin-arm64";
		}
		throw new IllegalStateException("No embedded redis-server for os.name=" + os + ", os.arch=" + arch
				+ "; install redis-server or set " + PATH_PROPERTY);
	}

	private static Path extract(String resource) {
		try (InputStream in = RedisBinary.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("Resource " + resource + " not found; is embedded-redis on the classpath?");
			}
			Path file = Files.createTempFile("distlock-" + resource + "-", "");
			file.toFile().deleteOnExit();
			Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
			if (!file.toFile().setExecutable(true, true)) {
				throw new IllegalStateException("Cannot make " + file + " executable");
			}
			return file;
		} catch (IOException e) {
			throw new UncheckedIOException("Cannot extract " + resource, e);
		}
	}

	private static String readVersion(Path path) {
		Path output = null;
		try {
			output = Files.createTempFile("distlock-redis-version-", ".txt");
			Process process = new ProcessBuilder(path.toString(), "--version")
					.redirectErrorStream(true).redirectOutput(output.toFile()).start();
			if (!process.waitFor(10, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				throw new IllegalStateException(path + " --version did not exit within 10s");
			}
			String text = Files.readString(output, StandardCharsets.UTF_8);
			Matcher matcher = VERSION.matcher(text);
			if (!matcher.find()) {
				throw new IllegalStateException("Cannot parse the version from " + path + " --version: " + text.strip());
			}
			return matcher.group(1);
		} catch (IOException e) {
			throw new UncheckedIOException("Cannot run " + path + " --version", e);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running " + path + " --version", e);
		} finally {
			if (output != null) {
				output.toFile().delete();
			}
		}
	}
}
