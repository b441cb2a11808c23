package dev.distlock.interceptor;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.LockObservationAutoConfiguration;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The observation of a call of a future-returning locked method lasts until its future completes. */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FutureLockObservationIntegrationTests {

	private RedisServer redis;

	@BeforeEach
	void flush(RedisServer redis) {
		this.redis = redis;
		redis.execute("FLUSHALL");
	}

	@Test
	void theCallIsObservedUntilItsFutureCompletesWithItsError() {
		DistributedLockInterceptorIntegrationTests.runner(this.redis)
			.withConfiguration(AutoConfigurations.of(LockObservationAutoConfiguration.class))
			.withBean(TestObservationRegistry.class, TestObservationRegistry::create)
			.withBean(Reports.class)
			.run((context) -> {
				TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
				CompletableFuture<String> work = new CompletableFuture<>();
				CompletableFuture<String> call = context.getBean(Reports.class).build("weekly", work);
				assertThat(registry).hasObservationWithNameEqualTo("distlock.call").that()
					.hasBeenStarted()
					.isNotStopped();
				IllegalStateException failure = new IllegalStateException("no data");
				work.completeExceptionally(failure);
				assertThat(call).failsWithin(10, TimeUnit.SECONDS);
				// stopped by a callback on the returned future, which may still be running when the caller sees it done
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(registry).hasObservationWithNameEqualTo("distlock.call").that()
						.hasBeenStopped()
						.hasError(failure));
			});
	}

	public static class Reports {

		@DistributedLock(key = "'report:' + #name", ttl = "10s", waitTime = "0")
		public CompletableFuture<String> build(String name, CompletableFuture<String> work) {
			return work;
		}

	}

}
