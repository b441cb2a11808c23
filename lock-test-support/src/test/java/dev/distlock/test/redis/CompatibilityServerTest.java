package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/** Where the shared servers are looked for, and the skip that names the place when they are not there. */
class CompatibilityServerTest {

	@AfterEach
	void clearProperty() {
		System.clearProperty(CompatibilityServer.FOLDER_PROPERTY);
	}

	@Test
	void byDefaultTheFolderIsBesideTheRepositoryRoot() {
		// the tests run in the module's directory; the repository root above it holds the Maven wrapper
		Path root = Path.of("").toAbsolutePath().getParent();
		assertThat(root.resolve("mvnw")).isRegularFile();
		if (System.getenv(CompatibilityServer.FOLDER_ENV) == null) {
			assertThat(CompatibilityServer.folder()).isEqualTo(root.getParent().resolve("shared/redis-servers"));
		}
	}

	@Test
	void aRelativeSettingIsResolvedAgainstTheRepositoryRoot() {
		System.setProperty(CompatibilityServer.FOLDER_PROPERTY, "../elsewhere/servers");
		Path root = Path.of("").toAbsolutePath().getParent();
		assertThat(CompatibilityServer.folder()).isEqualTo(root.getParent().resolve("elsewhere/servers"));
		assertThat(CompatibilityServer.VALKEY_8_0_1.path())
			.isEqualTo(root.getParent().resolve("elsewhere/servers/valkey-8.0.1/valkey-server"));
	}

	@Test
	void anAbsentServerSkipsTheTestNamingWhereItLooked(@TempDir Path empty) {
		System.setProperty(CompatibilityServer.FOLDER_PROPERTY, empty.toString());
		assertThat(CompatibilityServer.REDIS_7_2_4.binary()).isEmpty();
		assertThatThrownBy(CompatibilityServer.REDIS_7_2_4::require).isInstanceOf(TestAbortedException.class)
			.hasMessageContaining("Redis 7.2.4 is not here")
			.hasMessageContaining(empty.resolve("redis-7.2.4/redis-server").toString())
			.hasMessageContaining(CompatibilityServer.FOLDER_ENV);
	}

	@Test
	void aFileThatIsNotExecutableIsNoServer(@TempDir Path folder) throws Exception {
		// as the shared folder's valkey-8.0.1/redis-server: a link that became a plain file
		Files.createDirectories(folder.resolve("valkey-8.0.1"));
		Files.writeString(folder.resolve("valkey-8.0.1/valkey-server"), "valkey-server");
		System.setProperty(CompatibilityServer.FOLDER_PROPERTY, folder.toString());
		assertThat(CompatibilityServer.VALKEY_8_0_1.binary()).isEmpty();
	}

}
