package dev.distlock.observability;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** A locked call is observed as a whole, and its lock acquisition as a child: the lock wait is its own span. */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockObservationIntegrationTests {

	private RedisServer redis;

	@BeforeEach
	void flush(RedisServer redis) {
		this.redis = redis;
		redis.execute("FLUSHALL");
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.timeout=2s")
			.withUserConfiguration(Beans.class);
	}

	@Test
	void aLockedCallAndItsAcquisitionAreObservedWithNameTagsAndTheKeyOnlyAsAHighCardinalityTag() {
		runner().run(context -> {
			TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
			long token = context.getBean(Catalog.class).touch(42);

			assertThat(registry).hasNumberOfObservationsEqualTo(2)
				.hasObservationWithNameEqualTo("distlock.call").that()
				.hasBeenStarted()
				.hasBeenStopped()
				.hasContextualNameEqualTo("locked Catalog.touch")
				.hasLowCardinalityKeyValue("distlock.name", "Catalog.touch")
				.hasHighCardinalityKeyValue("distlock.keys", "item:42")
				.doesNotHaveError();
			assertThat(registry).hasObservationWithNameEqualTo("distlock.acquisition").that()
				.hasBeenStarted()
				.hasBeenStopped()
				.hasContextualNameEqualTo("acquire lock Catalog.touch")
				.hasLowCardinalityKeyValue("distlock.name", "Catalog.touch")
				.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
				.doesNotHaveLowCardinalityKeyValueWithKey("distlock.key")
				.hasHighCardinalityKeyValue("distlock.key", "item:42")
				.hasHighCardinalityKeyValue("distlock.fencing-token", Long.toString(token))
				.hasParentObservationContextMatching(parent -> parent.getName().equals("distlock.call"));
		});
	}

	@Test
	void aTimedOutAcquisitionIsObservedAsSuchAndTheCallWithItsError() {
		runner().run(context -> {
			TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
			LockService locks = context.getBean(LockService.class);
			Lease held = CompletableFuture
				.supplyAsync(() -> locks.acquire("item:7", Duration.ofSeconds(30), Duration.ZERO))
				.get(10, TimeUnit.SECONDS);
			try {
				assertThatExceptionOfType(LockAcquisitionTimeoutException.class)
					.isThrownBy(() -> context.getBean(Catalog.class).touch(7));
			}
			finally {
				held.release();
			}
			assertThat(registry).hasObservationWithNameEqualTo("distlock.acquisition").that()
				.hasLowCardinalityKeyValue("distlock.outcome", "timed-out")
				.doesNotHaveHighCardinalityKeyValueWithKey("distlock.fencing-token")
				.hasBeenStopped();
			assertThat(registry).hasObservationWithNameEqualTo("distlock.call").that()
				.hasError()
				.hasBeenStopped();
		});
	}

	@Test
	void aCustomConventionBeanRenamesTheObservation() {
		runner().withBean(LockAcquisitionObservationConvention.class, () -> new DefaultLockAcquisitionObservationConvention() {
			@Override
			public String getName() {
				return "inventory.lock.wait";
			}

			@Override
			public KeyValues getLowCardinalityKeyValues(LockAcquisitionContext context) {
				return super.getLowCardinalityKeyValues(context).and("team", "inventory");
			}
		}).run(context -> {
			context.getBean(Catalog.class).touch(1);
			assertThat(context.getBean(TestObservationRegistry.class))
				.hasObservationWithNameEqualTo("inventory.lock.wait").that()
				.hasLowCardinalityKeyValue("team", "inventory");
		});
	}

	@Test
	void withoutAnObservationRegistryNothingIsObservedAndCallsStillLock() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port())
			.withBean(Catalog.class)
			.run(context -> org.assertj.core.api.Assertions.assertThat(context.getBean(Catalog.class).touch(3)).isPositive());
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

		@Bean
		Catalog catalog() {
			return new Catalog();
		}

	}

}
