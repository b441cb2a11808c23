package dev.distlock.interceptor;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.LockService;
import dev.distlock.redis.RedisLockService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same calls when the lock service is an {@link AsyncLockService} (here the executor adapter over the Redis
 * engine): the interceptor acquires through {@code tryAcquireAsync} with the invocation's owner instead of binding the
 * owner to the calling thread.
 */
class FutureLockThroughAsyncServiceIntegrationTests extends FutureLockIntegrationTests {

	private static ExecutorService acquisitions;

	@BeforeAll
	static void acquisitions() {
		acquisitions = Executors.newCachedThreadPool();
	}

	@AfterAll
	static void shutDown() {
		acquisitions.shutdownNow();
	}

	@Override
	ApplicationContextRunner runner() {
		return super.runner().withUserConfiguration(AsyncService.class);
	}

	@Test
	void theInterceptorsServiceIsAsynchronous() {
		runner().run((context) -> assertThat(context.getBean(LockService.class)).isInstanceOf(AsyncLockService.class)
			.isNotInstanceOf(RedisLockService.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class AsyncService {

		@Bean
		RedisLockService engine(RedisConnectionFactory connectionFactory) {
			return RedisLockService.builder(connectionFactory).build();
		}

		@Bean
		@Primary
		AsyncLockService lockService(RedisLockService engine) {
			return AsyncLockService.adapt(engine, acquisitions);
		}

	}

}
