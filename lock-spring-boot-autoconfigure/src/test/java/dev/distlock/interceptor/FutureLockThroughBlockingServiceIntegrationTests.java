package dev.distlock.interceptor;

import java.util.Optional;

import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.redis.RedisLockService;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same calls when the lock service is only a blocking {@link LockService} (a view of the Redis engine that hides
 * whatever else it implements): the interceptor acquires on the calling thread with the invocation's owner bound to
 * it.
 */
class FutureLockThroughBlockingServiceIntegrationTests extends FutureLockIntegrationTests {

	@Override
	ApplicationContextRunner runner() {
		return super.runner().withUserConfiguration(BlockingService.class);
	}

	@Test
	void theInterceptorsServiceIsBlocking() {
		runner().run((context) -> assertThat(context.getBean(LockService.class)).isNotInstanceOf(AsyncLockService.class));
	}

	/** Only the {@link LockService} methods of {@code engine}. */
	static LockService blockingView(LockService engine) {
		return new LockService() {

			@Override
			public Optional<Lease> tryAcquire(LockRequest request) {
				return engine.tryAcquire(request);
			}

			@Override
			public Optional<LockHolder> holder(String key) {
				return engine.holder(key);
			}

		};
	}

	@Configuration(proxyBeanMethods = false)
	static class BlockingService {

		@Bean
		RedisLockService engine(RedisConnectionFactory connectionFactory) {
			return RedisLockService.builder(connectionFactory).build();
		}

		@Bean
		@Primary
		LockService lockService(RedisLockService engine) {
			return blockingView(engine);
		}

	}

}
