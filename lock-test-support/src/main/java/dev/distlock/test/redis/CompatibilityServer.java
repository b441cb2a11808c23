package dev.distlock.test.redis;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Assumptions;

/**
 * The Redis-compatible servers of the compatibility matrix that no package manager and no jar brings: Redis 7.2.4 and
 * Valkey 8.0.1. They live in a folder beside the repository, {@code ../shared/redis-servers} from its root (on the
 * project's machines and in CI, which clones the repository next to it), one sub-folder per server. A fresh clone
 * elsewhere does not have it, so tests that need one call {@link #require()}, which skips the test with a JUnit
 * assumption that says where the folder was looked for.
 *
 * <p>Where the folder is: system property {@value #FOLDER_PROPERTY} or env {@value #FOLDER_ENV} if set (a relative
 * path is resolved against the repository root), else {@code shared/redis-servers} in the parent of the repository
 * root, the nearest directory above the working directory that holds {@code mvnw}. {@code .ci/matrix.sh} uses the same
 * rule for its cells {@code redis-7.2.4} and {@code valkey-8.0.1}.
 */
public enum CompatibilityServer {

	/**
	 * Redis 7.2.4, the last 7.2 release in which Lua numbers with 8 or more trailing zeros reach commands in scientific
	 * notation ({@code 1e+8}, redis/redis#13113).
	 */
	REDIS_7_2_4("redis-7.2.4", "redis-server", "7.2.4"),

	/**
	 * Valkey 8.0.1, the fork managed services moved to. Its binary is {@code valkey-server}: the folder's
	 * {@code redis-server} "link" is a plain text file there, not an executable, so a {@code PATH} lookup would pass it
	 * over for another {@code redis-server}.
	 */
	VALKEY_8_0_1("valkey-8.0.1", "valkey-server", "8.0.1");

	/** System property naming the folder of the shared servers. */
	public static final String FOLDER_PROPERTY = "distlock.shared-redis-servers";

	/** Environment variable naming the folder of the shared servers. */
	public static final String FOLDER_ENV = "DISTLOCK_SHARED_REDIS_SERVERS";

	private final String directory;

	private final String executable;

	private final String version;

	CompatibilityServer(String directory, String executable, String version) {
		this.directory = directory;
		this.executable = executable;
		this.version = version;
	}

	/** {@return the version the server reports with {@code --version}, e.g. {@code 8.0.1}} */
	public String version() {
		return this.version;
	}

	/** {@return the executable this server would be, whether or not it exists} */
	public Path path() {
		return folder().resolve(this.directory).resolve(this.executable);
	}

	/** {@return the server's binary, or empty where the shared folder (or this server in it) is absent} */
	public Optional<RedisBinary> binary() {
		Path path = path();
		return (Files.isRegularFile(path) && Files.isExecutable(path)) ? Optional.of(RedisBinary.explicit(path))
				: Optional.empty();
	}

	/**
	 * The server's binary, or the calling test is skipped (a JUnit assumption) with a message that names the missing
	 * executable and how to point at the folder.
	 * @return the binary
	 */
	public RedisBinary require() {
		Optional<RedisBinary> binary = binary();
		Assumptions.assumeTrue(binary.isPresent(), this::absentMessage);
		return binary.orElseThrow();
	}

	/** {@return why a test that needs this server is skipped here} */
	public String absentMessage() {
		return "Skipped: " + this + " is not here: no executable " + path() + " (the shared servers' folder, "
				+ "../shared/redis-servers from the repository root, is absent on a fresh clone; set "
				+ FOLDER_ENV + " or -D" + FOLDER_PROPERTY + " to point at it)";
	}

	@Override
	public String toString() {
		return (this == VALKEY_8_0_1 ? "Valkey " : "Redis ") + this.version;
	}

	/** {@return the folder of the shared servers, as described in the class comment; it may not exist} */
	public static Path folder() {
		Path root = repositoryRoot();
		String setting = System.getProperty(FOLDER_PROPERTY);
		if (setting == null || setting.isBlank()) {
			setting = System.getenv(FOLDER_ENV);
		}
		if (setting != null && !setting.isBlank()) {
			Path named = Path.of(setting.trim());
			return (named.isAbsolute() || root == null) ? named.toAbsolutePath().normalize()
					: root.resolve(named).normalize();
		}
		Path base = (root != null && root.getParent() != null) ? root.getParent() : Path.of("").toAbsolutePath();
		return base.resolve("shared").resolve("redis-servers");
	}

	/** The nearest directory at or above the working directory that holds the Maven wrapper, if any. */
	private static @Nullable Path repositoryRoot() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			if (Files.isRegularFile(dir.resolve("mvnw"))) {
				return dir;
			}
		}
		return null;
	}

}
