package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

import dev.distlock.core.LockServiceLock;
import dev.distlock.integration.LockServiceLockRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

import static org.assertj.core.api.Assertions.assertThat;

/** When the {@code LockRegistry} view is configured, and when it backs off. */
class LockRegistryAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LockRegistryAutoConfiguration.class));

	@Test
	void aLockServiceGetsARegistryWithTheDefaultTtl() {
		this.runner.withBean(InMemoryLockService.class).withPropertyValues("distlock.default-ttl=7s").run(context -> {
			LockRegistry<?> registry = context.getBean(LockRegistry.class);
			assertThat(registry).isInstanceOf(LockServiceLockRegistry.class);
			Lock lock = registry.obtain("job");
			assertThat(((LockServiceLock) lock).ttl()).isEqualTo(Duration.ofSeconds(7));
			assertThat(lock.tryLock()).isTrue();
			lock.unlock();
		});
	}

	@Test
	void backsOffWithTheApplicationsOwnRegistry() {
		this.runner.withBean(InMemoryLockService.class)
			.withBean("ownRegistry", LockRegistry.class, DefaultLockRegistry::new)
			.run(context -> assertThat(context).getBean(LockRegistry.class).isInstanceOf(DefaultLockRegistry.class));
	}

	@Test
	void backsOffWithoutALockService() {
		this.runner.run(context -> assertThat(context).doesNotHaveBean(LockRegistry.class));
	}

	@Test
	void backsOffWithoutSpringIntegration() {
		this.runner.withBean(InMemoryLockService.class)
			.withClassLoader(new FilteredClassLoader("org.springframework.integration"))
			.run(context -> assertThat(context).doesNotHaveBean(LockServiceLockRegistry.class));
	}

	@Test
	void backsOffWhenLocksAreDisabled() {
		this.runner.withBean(InMemoryLockService.class)
			.withPropertyValues("distlock.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(LockRegistry.class));
	}

}
