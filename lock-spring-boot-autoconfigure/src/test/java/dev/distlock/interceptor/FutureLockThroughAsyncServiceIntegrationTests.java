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
 * The same calls when the lock service is the executor adapter of {@link AsyncLockService#adapt} over a blocking view
 * of the Redis engine: the interceptor acquires through {@code tryAcquireAsync} with the invocation's owner, each
 * acquisition running on a thread of the executor with that owner bound.
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
		runner().run((context) -> assertThat(context.getBean(LockService.class).getClass().getName())
			.isEqualTo("dev.distlock.core.ExecutorAsyncLockService"));
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
			return AsyncLockService.adapt(FutureLockThroughBlockingServiceIntegrationTests.blockingView(engine),
					acquisitions);
		}

	}

}
