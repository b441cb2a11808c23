package dev.distlock.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No source file of the main code, in any module of the build, is longer than {@value #MAX_LINES} lines (issue 27).
 * A class that grows past it has more than one reason to change; the bound makes the split happen when the second
 * reason arrives, not after the fifth. Generated sources ({@code target/}) and tests are not counted: a test class
 * reads best as one scenario after another.
 */
class ClassSizeTests {

	static final int MAX_LINES = 400;

	/** The repository's root: this module's parent, which holds every module of the build. */
	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	@Test
	void noMainSourceFileIsLongerThanTheBound() throws IOException {
		List<Path> mainSources = mainSourceRoots();
		assertThat(mainSources).as("the main source folders of the build, from %s", ROOT)
			.anySatisfy((root) -> assertThat(root).endsWith(Path.of("lock-redis", "src", "main", "java")))
			.anySatisfy((root) -> assertThat(root).endsWith(Path.of("lock-core", "src", "main", "java")));
		Map<String, Long> tooLong = new TreeMap<>();
		for (Path root : mainSources) {
			try (Stream<Path> files = Files.walk(root)) {
				files.filter((file) -> file.toString().endsWith(".java") || file.toString().endsWith(".kt"))
					.forEach((file) -> {
						long lines = lines(file);
						if (lines > MAX_LINES) {
							tooLong.put(ROOT.relativize(file).toString(), lines);
						}
					});
			}
		}
		assertThat(tooLong).as("main source files longer than %d lines (split each along a real seam)", MAX_LINES)
			.isEmpty();
	}

	private static List<Path> mainSourceRoots() throws IOException {
		try (Stream<Path> modules = Files.list(ROOT)) {
			return modules.filter(Files::isDirectory)
				.filter((module) -> Files.isRegularFile(module.resolve("pom.xml")))
				.flatMap((module) -> Stream.of(module.resolve("src/main/java"), module.resolve("src/main/kotlin")))
				.filter(Files::isDirectory)
				.sorted()
				.toList();
		}
	}

	private static long lines(Path file) {
		try (Stream<String> lines = Files.lines(file)) {
			return lines.count();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
