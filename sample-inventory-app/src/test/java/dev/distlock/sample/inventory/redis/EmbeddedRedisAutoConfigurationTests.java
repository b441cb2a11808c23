package dev.distlock.sample.inventory.redis;

import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the sample starts its own Redis: only without a configured address, never on 6379, and stopped with the
 * context.
 */
class EmbeddedRedisAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(EmbeddedRedisAutoConfiguration.class, DataRedisAutoConfiguration.class));

	@Test
	void startsAPrivateRedisWhenNoAddressIsConfiguredAndStopsItWithTheContext() {
		RedisServer[] started = new RedisServer[1];
		this.runner.run((context) -> {
			RedisServer server = context.getBean(RedisServer.class);
			started[0] = server;
			assertThat(server.isRunning()).isTrue();
			assertThat(server.port()).isNotEqualTo(6379);
			assertThat(context.getBean(DataRedisConnectionDetails.class).getStandalone().getPort()).isEqualTo(server.port());
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			redis.opsForValue().set("probe", "ok");
			assertThat(server.execute("GET", "probe")).isEqualTo("ok");
		});
		assertThat(started[0].isRunning()).isFalse();
	}

	@Test
	void backsOffWhenAHostIsConfigured() {
		this.runner.withPropertyValues("spring.data.redis.host=redis.example", "spring.data.redis.port=6390")
			.run((context) -> {
				assertThat(context).doesNotHaveBean(RedisServer.class);
				assertThat(context.getBean(DataRedisConnectionDetails.class).getStandalone().getHost()).isEqualTo("redis.example");
			});
	}

	@Test
	void backsOffWhenAUrlIsConfigured() {
		this.runner.withPropertyValues("spring.data.redis.url=redis://redis.example:6390")
			.run((context) -> assertThat(context).doesNotHaveBean(RedisServer.class));
	}

	@Test
	void backsOffForClusterNodes() {
		this.runner.withPropertyValues("spring.data.redis.cluster.nodes[0]=redis.example:7000")
			.run((context) -> assertThat(context).doesNotHaveBean(RedisServer.class));
	}

	@Test
	void backsOffWhenDisabled() {
		this.runner.withPropertyValues("inventory.embedded-redis.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RedisServer.class));
	}

	@Test
	void startsWhenEnabledEvenIfAnAddressIsConfigured() {
		this.runner.withPropertyValues("inventory.embedded-redis.enabled=true", "spring.data.redis.host=redis.example")
			.run((context) -> assertThat(context).hasSingleBean(RedisServer.class)
				.hasSingleBean(DataRedisConnectionDetails.class));
	}

	/** As with Testcontainers' {@code @ServiceConnection}: connection details from elsewhere win. */
	@Test
	void backsOffForConnectionDetailsFromElsewhere() {
		this.runner.withUserConfiguration(OtherConnectionDetails.class)
			.run((context) -> assertThat(context).doesNotHaveBean(RedisServer.class)
				.hasSingleBean(DataRedisConnectionDetails.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class OtherConnectionDetails {

		@Bean
		DataRedisConnectionDetails otherRedis() {
			return new DataRedisConnectionDetails() {

				@Override
				public Standalone getStandalone() {
					return Standalone.of("redis.example", 6390);
				}

			};
		}

	}

}
