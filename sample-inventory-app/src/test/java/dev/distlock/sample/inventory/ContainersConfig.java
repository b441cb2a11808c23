package dev.distlock.sample.inventory;

import com.redis.testcontainers.RedisContainer;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Profile;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis container for development with Docker, under the {@value #PROFILE} profile: its {@code @ServiceConnection}
 * takes the place of {@link DevRedisConfiguration}'s private {@code redis-server}. Used by
 * {@link TestInventoryApplication} and its Docker-only test.
 */
@TestConfiguration(proxyBeanMethods = false)
@Profile(ContainersConfig.PROFILE)
public class ContainersConfig {

	/** {@code -Dspring-boot.run.profiles=container} with {@code spring-boot:test-run}. */
	public static final String PROFILE = "container";

	@Bean
	@ServiceConnection
	RedisContainer redisContainer() {
		return new RedisContainer(DockerImageName.parse("redis:7"));
	}

}
