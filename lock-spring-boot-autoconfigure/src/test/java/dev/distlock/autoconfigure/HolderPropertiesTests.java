package dev.distlock.autoconfigure;

import java.time.Duration;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.Lease;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code distlock.holder.application} and {@code distlock.holder.instance}: how log lines and messages name the holder
 * of this instance's leases (issue 29), bound, defaulted and given to the engine.
 */
@ExtendWith(RedisServerExtension.class)
class HolderPropertiesTests {

	private static RedisServer redis;

	private final ApplicationContextRunner properties = new ApplicationContextRunner()
		.withUserConfiguration(PropertiesOnly.class);

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	@Test
	void bothAreBound() {
		this.properties.withPropertyValues("distlock.holder.application=inventory", "distlock.holder.instance=pod-7")
			.run((context) -> {
				LockHolderProperties holder = context.getBean(LockProperties.class).getHolder();
				assertThat(holder.getApplication()).isEqualTo("inventory");
				assertThat(holder.getInstance()).isEqualTo("pod-7");
				assertThat(holder.applicationOrDefault(context.getEnvironment())).isEqualTo("inventory");
				assertThat(holder.instanceOrDefault()).isEqualTo("pod-7");
			});
	}

	@Test
	void theApplicationDefaultsToSpringApplicationNameAndTheInstanceToTheHostName() {
		this.properties.withPropertyValues("spring.application.name=inventory").run((context) -> {
			LockHolderProperties holder = context.getBean(LockProperties.class).getHolder();
			assertThat(holder.getApplication()).isNull();
			assertThat(holder.getInstance()).isNull();
			assertThat(holder.applicationOrDefault(context.getEnvironment())).isEqualTo("inventory");
			assertThat(holder.instanceOrDefault()).isEqualTo(HolderLabel.hostName()).isNotBlank();
		});
	}

	@Test
	void withoutAnApplicationNameTheApplicationIsCalledApplication() {
		this.properties.run((context) -> assertThat(context.getBean(LockProperties.class)
			.getHolder()
			.applicationOrDefault(context.getEnvironment())).isEqualTo(HolderLabel.DEFAULT_APPLICATION));
	}

	@Test
	void aBlankValueFailsTheStartNamingTheProperty() {
		this.properties.withPropertyValues("distlock.holder.instance= ")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("distlock.holder.instance must not be blank"));
	}

	@Test
	void theEngineLabelsItsLeasesWithThem() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.application.name=inventory", "distlock.holder.instance=pod-7")
			.run((context) -> {
				RedisLockService service = context.getBean(RedisLockService.class);
				try (Lease lease = service.acquire("labelled", Duration.ofSeconds(10), Duration.ofSeconds(5))) {
					assertThat(lease.holder()).isEqualTo(new HolderLabel("inventory", "pod-7",
							"thread \"" + Thread.currentThread().getName() + "\""));
					assertThat(lease.toString()).contains("inventory@pod-7").doesNotContain(lease.owner());
				}
			});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(LockProperties.class)
	static class PropertiesOnly {

	}

}
