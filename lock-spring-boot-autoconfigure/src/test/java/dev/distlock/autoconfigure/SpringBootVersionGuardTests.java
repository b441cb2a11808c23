package dev.distlock.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/** The start of an application on a Spring Boot line the starter does not support fails with a message saying so. */
class SpringBootVersionGuardTests {

	@Test
	void springBootThreeOrOlderFailsWithTheVersionsInTheMessage() {
		for (String version : List.of("3.5.7", "3.4.2", "2.7.18")) {
			assertThatIllegalStateException().isThrownBy(() -> SpringBootVersionGuard.check(version))
				.withMessageContaining("needs Spring Boot 4.0 or later")
				.withMessageContaining("runs on Spring Boot " + version);
		}
	}

	@Test
	void springBootFourAndLaterPass() {
		for (String version : List.of("4.0.0", "4.0.9", "4.1.1", "4.2.0-M1", "5.0.0")) {
			assertThatNoException().isThrownBy(() -> SpringBootVersionGuard.check(version));
		}
	}

	@Test
	void anUnreadableVersionPasses() {
		for (String version : new String[] { null, "", "unknown", "20260101.1" }) {
			assertThatNoException().isThrownBy(() -> SpringBootVersionGuard.check(version));
		}
	}

	@Test
	void everySpringApplicationRunsTheGuard() {
		assertThat(SpringFactoriesLoader.forDefaultResourceLocation(getClass().getClassLoader())
			.load(ApplicationContextInitializer.class)).anyMatch(SpringBootVersionGuard.class::isInstance);
		assertThat(new SpringApplication(Empty.class).getInitializers()).anyMatch(SpringBootVersionGuard.class::isInstance);
	}

	@Test
	void anApplicationOnThisSpringBootStarts() {
		assertThat(SpringBootVersion.getVersion()).startsWith("4.");
		SpringApplication application = new SpringApplication(Empty.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		try (ConfigurableApplicationContext context = application.run("--lock.enabled=false",
				"--spring.main.banner-mode=off")) {
			assertThat(context.isActive()).isTrue();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class Empty {

	}

}
