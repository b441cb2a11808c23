package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link RedisLockServiceBuilderCustomizer} beans reach the auto-configured engine after the properties, including the
 * settings of its listener container (where an application applies Boot 4.1's {@code spring.data.redis.listener.*}).
 */
@ExtendWith(RedisServerExtension.class)
class RedisLockServiceBuilderCustomizerTests {

	private static RedisServer redis;

	@BeforeAll
	static void server(RedisServer server) {
		redis = server;
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@Test
	void anApplicationsCustomizerIsAppliedAfterTheProperties() {
		runner().withUserConfiguration(PrefixCustomizer.class)
			.withPropertyValues("distlock.key-prefix=from-properties")
			.run(context -> {
				RedisLockService service = context.getBean(RedisLockService.class);
				assertThat(service.redisKey("k")).isEqualTo("customized:{k}");
			});
	}

	@Test
	void aListenerContainerCustomizerConfiguresTheEnginesContainer() {
		runner().withUserConfiguration(ContainerCustomizer.class)
			.run(context -> {
				// the engine's waiters hear releases through the container so configured
				RedisLockService locks = context.getBean(RedisLockService.class);
				Lease held = locks.acquire("configured", Duration.ofSeconds(30), Duration.ZERO);
				CompletableFuture<Lease> waiting = CompletableFuture
					.supplyAsync(() -> locks.acquire("configured", Duration.ofSeconds(30), Duration.ofSeconds(20)));
				await().atMost(Duration.ofSeconds(10)).until(() -> locks.waitingThreads() == 1);
				long released = System.nanoTime();
				held.release();
				try (Lease next = waiting.get(20, TimeUnit.SECONDS)) {
					// a release message, not the holder's 30 s lease time, ended the wait
					assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Duration.ofSeconds(10));
				}
				// the customizer ran on the engine's container, before the engine set its own executors
				assertThat(context.getBean(ContainerCustomizer.class).customized).hasValue(1);
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class ContainerCustomizer {

		final AtomicInteger customized = new AtomicInteger();

		@Bean
		RedisLockServiceBuilderCustomizer listenerSettings() {
			// as Boot 4.1's RedisMessageListenerContainerConfigurer would: registration timeout and recovery back-off
			return (builder) -> builder.listenerContainer((container) -> {
				container.setMaxSubscriptionRegistrationWaitingTime(3_000);
				container.setRecoveryInterval(200);
				this.customized.incrementAndGet();
			});
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PrefixCustomizer {

		@Bean
		RedisLockServiceBuilderCustomizer prefix() {
			return (builder) -> builder.keyPrefix("customized");
		}

	}

}
