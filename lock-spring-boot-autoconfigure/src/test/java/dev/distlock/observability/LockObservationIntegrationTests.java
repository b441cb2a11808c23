package dev.distlock.observability;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.InMemoryLockService;
import dev.distlock.autoconfigure.LockObservationAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A locked call is observed as a whole, and its lock acquisition as a child: the lock wait is its own span. The
 * acquisition is observed by the {@link ObservedLockService} around the engine, so a programmatic one is observed alike.
 */
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
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					LockObservationAutoConfiguration.class))
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
			// the holder takes the key through the engine itself, unobserved, so the only acquisition observed is the call's
			LockService locks = context.getBean(RedisLockService.class);
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
	void aProgrammaticAcquisitionIsObservedWithTheSameNameContextualNameAndTagsAsAnAnnotatedOne() {
		runner().run(context -> {
			TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
			context.getBean(Catalog.class).touch(42);
			Observation.Context annotated = acquisitionContext(registry);
			registry.clear();

			LockService locks = context.getBean(LockService.class);
			org.assertj.core.api.Assertions.assertThat(locks).isInstanceOf(ObservedLockService.class);
			long token;
			try (Lease lease = locks.tryAcquire(LockRequest.of("item:42", Duration.ofSeconds(20), Duration.ZERO)
				.withName("Catalog.touch")).orElseThrow()) {
				token = lease.fencingToken();
				// questions to the store pass through the observed service, and are not observed
				org.assertj.core.api.Assertions.assertThat(locks.isLocked("item:42")).isTrue();
				org.assertj.core.api.Assertions.assertThat(locks.holder("item:42"))
					.hasValueSatisfying(holder -> org.assertj.core.api.Assertions.assertThat(holder.fencingToken()).isEqualTo(lease.fencingToken()));
			}
			org.assertj.core.api.Assertions.assertThat(locks.isLocked("item:42")).isFalse();

			assertThat(registry).hasNumberOfObservationsEqualTo(1)
				.hasSingleObservationThat()
				.hasNameEqualTo("distlock.acquisition")
				.hasBeenStarted()
				.hasBeenStopped()
				.hasContextualNameEqualTo("acquire lock Catalog.touch")
				.hasLowCardinalityKeyValue("distlock.name", "Catalog.touch")
				.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
				.hasHighCardinalityKeyValue("distlock.key", "item:42")
				.hasHighCardinalityKeyValue("distlock.fencing-token", Long.toString(token))
				.doesNotHaveParentObservation();
			Observation.Context programmatic = acquisitionContext(registry);
			org.assertj.core.api.Assertions.assertThat(programmatic.getName()).isEqualTo(annotated.getName());
			org.assertj.core.api.Assertions.assertThat(programmatic.getContextualName())
				.isEqualTo(annotated.getContextualName());
			org.assertj.core.api.Assertions.assertThat(programmatic.getLowCardinalityKeyValues())
				.isEqualTo(annotated.getLowCardinalityKeyValues());
			org.assertj.core.api.Assertions.assertThat(keyNames(programmatic.getHighCardinalityKeyValues()))
				.isEqualTo(keyNames(annotated.getHighCardinalityKeyValues()));
		});
	}

	@Test
	void acquireExecuteAndRunAreEachObservedOnce() {
		runner().run(context -> {
			TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
			LockService locks = context.getBean(LockService.class);
			locks.acquire("a", Duration.ofSeconds(5), Duration.ZERO).release();
			locks.execute("b", Duration.ofSeconds(5), Duration.ZERO, () -> "done");
			locks.run("c", Duration.ofSeconds(5), Duration.ZERO, () -> {
			});
			assertThat(registry).hasNumberOfObservationsWithNameEqualTo("distlock.acquisition", 3)
				.forAllObservationsWithNameEqualTo("distlock.acquisition",
						(observation) -> observation.hasLowCardinalityKeyValue("distlock.name", "default")
							.hasLowCardinalityKeyValue("distlock.outcome", "acquired"));
		});
	}

	@Test
	void theEngineKeepsItsBeanNameTypeAndLifecycleBesideTheObservedService() {
		runner().run(context -> {
			org.assertj.core.api.Assertions.assertThat(context).hasBean("lockService")
				.hasBean(LockObservationAutoConfiguration.BEAN_NAME)
				.hasSingleBean(RedisLockService.class);
			RedisLockService engine = context.getBean(RedisLockService.class);
			ObservedLockService observed = context.getBean(ObservedLockService.class);
			org.assertj.core.api.Assertions.assertThat(context.getBean("lockService")).isSameAs(engine);
			org.assertj.core.api.Assertions.assertThat(context.getBean(LockService.class)).isSameAs(observed);
			org.assertj.core.api.Assertions.assertThat(observed.getDelegate()).isSameAs(engine);
			org.assertj.core.api.Assertions.assertThat(engine.isRunning()).isTrue();
		});
	}

	@Test
	void theApplicationsOwnLockServiceIsObservedToo() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					LockObservationAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.data.redis"))
			.withUserConfiguration(Beans.class)
			.withBean(InMemoryLockService.class)
			.run(context -> {
				context.getBean(Catalog.class).touch(5);
				assertThat(context.getBean(TestObservationRegistry.class))
					.hasNumberOfObservationsEqualTo(2)
					.hasObservationWithNameEqualTo("distlock.acquisition").that()
					.hasLowCardinalityKeyValue("distlock.outcome", "acquired")
					.hasParentObservationContextMatching(parent -> parent.getName().equals("distlock.call"));
				org.assertj.core.api.Assertions.assertThat(context.getBean(InMemoryLockService.class).requests())
					.hasSize(1);
			});
	}

	@Test
	void severalLockServicesOrAPrimaryOneAreLeftAsTheyAre() {
		runner().withBean("first", LockService.class, InMemoryLockService::new)
			.withBean("second", LockService.class, InMemoryLockService::new)
			.run(context -> org.assertj.core.api.Assertions.assertThat(context).hasNotFailed()
				.doesNotHaveBean(ObservedLockService.class));
		runner().withBean(InMemoryLockService.class, InMemoryLockService::new, (definition) -> definition.setPrimary(true))
			.run(context -> org.assertj.core.api.Assertions.assertThat(context).hasNotFailed()
				.doesNotHaveBean(ObservedLockService.class)
				.doesNotHaveBean(RedisLockService.class));
	}

	private static Observation.Context acquisitionContext(TestObservationRegistry registry) {
		List<Observation.Context> found = new ArrayList<>();
		assertThat(registry).hasHandledContextsThatSatisfy(contexts -> contexts.stream()
			.filter(context -> context.getName().equals("distlock.acquisition"))
			.forEach(found::add));
		org.assertj.core.api.Assertions.assertThat(found).hasSize(1);
		return found.get(0);
	}

	private static List<String> keyNames(KeyValues values) {
		return values.stream().map(KeyValue::getKey).sorted().toList();
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
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					LockObservationAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port())
			.withBean(Catalog.class)
			.run(context -> {
				org.assertj.core.api.Assertions.assertThat(context).hasSingleBean(LockService.class)
					.doesNotHaveBean(ObservedLockService.class);
				org.assertj.core.api.Assertions.assertThat(context.getBean(Catalog.class).touch(3)).isPositive();
			});
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
