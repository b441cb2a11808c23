package dev.distlock.sample.inventory;

import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the dev launcher starts its own Redis: only without a configured address and outside the container profile,
 * never on 6379, and stopped with the context.
 */
class DevRedisConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(DevRedisConfiguration.class)
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class));

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

	/** There the Redis container's {@code @ServiceConnection} provides the connection details. */
	@Test
	void backsOffUnderTheContainerProfile() {
		this.runner.withPropertyValues("spring.profiles.active=" + ContainersConfig.PROFILE)
			.run((context) -> assertThat(context).doesNotHaveBean(RedisServer.class)
				.hasSingleBean(DataRedisConnectionDetails.class));
	}

}
