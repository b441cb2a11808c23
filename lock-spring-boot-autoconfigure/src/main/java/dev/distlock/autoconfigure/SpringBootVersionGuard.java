package dev.distlock.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Stops an application that runs this starter on a Spring Boot line it does not support (3.x and older) before the
 * context refreshes, with a message that names the versions, instead of a class-not-found error from deep inside the
 * auto-configuration. Registered in {@code META-INF/spring.factories}, so every {@code SpringApplication} runs it; it
 * uses only types that every Spring Boot line has.
 * <p>
 * Not API: applications never refer to it.
 *
 * @since 0.1.0
 */
public final class SpringBootVersionGuard implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	/** The oldest Spring Boot major version this starter runs on. */
	static final int MINIMUM_MAJOR_VERSION = 4;

	/** Created by Spring Boot from {@code META-INF/spring.factories}; applications do not create it. */
	public SpringBootVersionGuard() {
	}

	@Override
	public void initialize(ConfigurableApplicationContext applicationContext) {
		check(SpringBootVersion.getVersion());
	}

	/**
	 * Fail when {@code bootVersion} is older than Spring Boot 4.0; nothing is said about a version that cannot be
	 * read (a repackaged Spring Boot without its manifest).
	 */
	static void check(@Nullable String bootVersion) {
		int major = majorVersion(bootVersion);
		if (major >= 0 && major < MINIMUM_MAJOR_VERSION) {
			throw new IllegalStateException("distlock (dev.distlock:lock-spring-boot-starter) needs Spring Boot "
					+ MINIMUM_MAJOR_VERSION + ".0 or later, but this application runs on Spring Boot " + bootVersion
					+ ". Use Spring Boot 4.0.x or 4.1.x (see the compatibility table in the starter's README).");
		}
	}

	private static int majorVersion(@Nullable String version) {
		if (version == null) {
			return -1;
		}
		int end = 0;
		while (end < version.length() && Character.isDigit(version.charAt(end))) {
			end++;
		}
		return (end == 0 || end > 4) ? -1 : Integer.parseInt(version.substring(0, end));
	}

}
