package dev.distlock.sample.inventory.demo;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import dev.distlock.sample.inventory.demo.AppInstance.Launcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The instances run the application through {@link DemoInstance}, which only this module has: a jar without it (the
 * sample's own jar, say) is refused at once rather than left to time out without a port.
 */
class AppInstanceLauncherTests {

	@Test
	void fromAClassPathTheInstancesRunDemoInstance() {
		assertThat(Launcher.detect(null).arguments()).first().isEqualTo("-cp");
		assertThat(Launcher.detect(null).arguments()).last().isEqualTo(DemoInstance.class.getName());
	}

	@Test
	void aJarOfThisModuleStartsDemoInstanceThroughItsPropertiesLauncher(@TempDir Path dir) throws IOException {
		Path jar = jar(dir.resolve("sample-inventory-demo.jar"),
				"BOOT-INF/classes/dev/distlock/sample/inventory/demo/DemoInstance.class");

		assertThat(Launcher.detect(jar).arguments()).containsExactly(
				"-Dloader.main=dev.distlock.sample.inventory.demo.DemoInstance", "-jar", jar.toAbsolutePath().toString());
	}

	@Test
	void aJarWithoutDemoInstanceIsRefusedNamingTheOption(@TempDir Path dir) throws IOException {
		Path jar = jar(dir.resolve("sample-inventory-app.jar"),
				"BOOT-INF/classes/dev/distlock/sample/inventory/InventoryApplication.class");

		assertThatIllegalArgumentException().isThrownBy(() -> Launcher.detect(jar))
			.withMessage("Option --app-jar: " + jar + " is not a jar of sample-inventory-demo (it has no "
					+ "dev.distlock.sample.inventory.demo.DemoInstance)");
		assertThatIllegalArgumentException().isThrownBy(() -> Launcher.detect(dir.resolve("missing.jar")))
			.withMessage("Option --app-jar: no such file " + dir.resolve("missing.jar"));
	}

	private static Path jar(Path path, String entry) throws IOException {
		try (OutputStream file = Files.newOutputStream(path); JarOutputStream jar = new JarOutputStream(file)) {
			jar.putNextEntry(new JarEntry(entry));
			jar.closeEntry();
		}
		return path;
	}

}
