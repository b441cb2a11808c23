package dev.distlock.sample.inventory;

import com.redis.testcontainers.RedisContainer;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.testcontainers.utility.DockerImageName;

/**
 * A Redis container for development with Docker: its {@code @ServiceConnection} replaces the sample's embedded Redis.
 * Used by {@link TestInventoryApplication} and its Docker-only test.
 */
@TestConfiguration(proxyBeanMethods = false)
public class ContainersConfig {

	@Bean
	@ServiceConnection
	RedisContainer redisContainer() {
		return new RedisContainer(DockerImageName.parse("redis:7"));
	}

}
