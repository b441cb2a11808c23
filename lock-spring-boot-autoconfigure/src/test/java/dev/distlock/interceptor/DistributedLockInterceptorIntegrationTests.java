package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.annotation.LockContext;
import dev.distlock.annotation.LockFailure;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.LockedBeans.Accounts;
import dev.distlock.interceptor.LockedBeans.DefaultAccounts;
import dev.distlock.interceptor.LockedBeans.Inventory;
import dev.distlock.interceptor.LockedBeans.Observation;
import dev.distlock.interceptor.LockedBeans.Order;
import dev.distlock.interceptor.LockedBeans.Outer;
import dev.distlock.interceptor.LockedBeans.Regions;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.redis.LockTestSupport;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** {@code @DistributedLock} on real beans in a real context, against a real Redis. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DistributedLockInterceptorIntegrationTests extends RedisContextFixture {

	static ApplicationContextRunner runner(RedisServer redis) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s");
	}

	private void run(Consumer<AssertableApplicationContext> test, String... properties) {
		runner(redis).withUserConfiguration(Beans.class).withPropertyValues(properties).run(test::accept);
	}

	@Test
	void aClassProxyLocksAndTheMethodSeesItsLease() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			assertThat(AopUtils.isCglibProxy(inventory)).isTrue();
			Observation seen = inventory.place(new Order("sku-7", 2));
			assertThat(seen.lease().key()).isEqualTo("sku-7");
			assertThat(seen.lease().fencingToken()).isPositive();
			assertThat(seen.lease().name()).isEqualTo("LockedBeans.Inventory.place");
			assertThat(seen.holdsInRedis()).isEqualTo("1");
			// the lease in the lock context answers questions to the store
			assertThat(seen.ownedInStore()).isTrue();
			assertThat(seen.validUntil()).isAfter(seen.observedAt());
			assertThat(seen.lease().isHeld()).isFalse(); // released after the call
			assertThat(seen.lease().isOwned()).isFalse();
			assertThat(LockContext.current()).isEmpty();
			assertThat(LockTestSupport.leftKeys(redis)).isEmpty();
		});
	}

	@Test
	void anInterfaceProxyLocksWithTheAnnotationOnTheInterface() {
		run(context -> {
			Accounts accounts = context.getBean(Accounts.class);
			assertThat(AopUtils.isJdkDynamicProxy(accounts)).isTrue();
			Observation seen = accounts.touch("42");
			assertThat(seen.lease().key()).isEqualTo("account:42");
			assertThat(seen.holdsInRedis()).isEqualTo("1");
		}, "spring.aop.proxy-target-class=false");
	}

	@Test
	void worksWithoutAspectJOnTheClasspath() {
		runner(redis).withUserConfiguration(Beans.class).withClassLoader(new FilteredClassLoader("org.aspectj"))
			.run(context -> {
				Inventory inventory = context.getBean(Inventory.class);
				assertThat(inventory.place(new Order("sku-1", 1)).holdsInRedis()).isEqualTo("1");
				assertThat(context.getBean(Accounts.class).touch("1").holdsInRedis()).isEqualTo("1");
			});
	}

	@Test
	void aMetaAnnotationWithAnAliasedKeyLocks() {
		run(context -> {
			Observation seen = context.getBean(Inventory.class).reserve("sku-3");
			assertThat(seen.lease().key()).isEqualTo("sku:sku-3");
			assertThat(seen.lease().name()).isEqualTo("inventory");
			assertThat(seen.lease().ttl()).isEqualTo(Duration.ofSeconds(10));
		});
	}

	@Test
	void aNestedAnnotatedCallOnTheSameKeyReentersTheLease() {
		run(context -> {
			List<Observation> seen = context.getBean(Outer.class).reserveTwice("sku-5");
			assertThat(seen.get(0).holdsInRedis()).isEqualTo("1");
			assertThat(seen.get(1).holdsInRedis()).isEqualTo("2");
			assertThat(seen.get(1).lease().fencingToken()).isEqualTo(seen.get(0).lease().fencingToken());
			assertThat(seen.get(2).holdsInRedis()).isEqualTo("1");
			assertThat(seen.get(2).lease()).isSameAs(seen.get(0).lease()); // the context is back to the outer call's
			assertThat(LockTestSupport.leftKeys(redis)).isEmpty();
		});
	}

	@Test
	void aCollectionKeyLocksEveryElementInSortedOrderAllOrNoneAndReleasesInReverse() {
		LockEvents events = new LockEvents("LockedBeans.Inventory.reserveAll");
		runner(redis).withUserConfiguration(Beans.class).withBean(LockEvents.class, () -> events).run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			Observation seen = inventory.reserveAll(List.of("b", "c", "a", "b"));
			assertThat(seen.leases()).extracting(Lease::key).containsExactly("a", "b", "c");
			assertThat(seen.allHoldsInRedis()).containsExactly("1", "1", "1");
			assertThat(seen.leases()).allSatisfy(lease -> assertThat(lease.isHeld()).isFalse());
			assertThat(events.drain()).containsExactly("acquire a", "acquire b", "acquire c", "release c", "release b",
					"release a");

			// with one of the keys held elsewhere, the keys before it are released again (in reverse) and the method
			// does not run
			LockService locks = context.getBean(LockService.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("c", Duration.ofSeconds(30), Duration.ZERO)).join();
			int calls = inventory.calls();
			assertThatExceptionOfType(LockAcquisitionTimeoutException.class)
				.isThrownBy(() -> inventory.reserveAll(Set.of("c", "b", "a")))
				.withMessageContaining("'c'").withMessageContaining("Inventory.reserveAll");
			assertThat(inventory.calls()).isEqualTo(calls);
			assertThat(redis.execute("EXISTS", "lock:{a}", "lock:{b}")).isEqualTo(0L);
			assertThat(events.drain()).containsExactly("acquire a", "acquire b", "miss c", "release b", "release a");
			held.release();
		});
	}

	@Test
	void anArrayKeyLocksEveryElementInSortedOrderAllOrNone() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			Observation seen = inventory.reserveArray("b", "c", "a", "b");
			assertThat(seen.leases()).extracting(Lease::key).containsExactly("a", "b", "c");
			assertThat(seen.allHoldsInRedis()).containsExactly("1", "1", "1");

			// an array made by the expression itself
			Observation split = inventory.reserveSplit("y,x");
			assertThat(split.leases()).extracting(Lease::key).containsExactly("x", "y");
			assertThat(split.allHoldsInRedis()).containsExactly("1", "1");
			assertThat(LockTestSupport.leftKeys(redis)).isEmpty();

			LockService locks = context.getBean(LockService.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("c", Duration.ofSeconds(30), Duration.ZERO)).join();
			assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> inventory.reserveArray("c", "a"))
				.withMessageContaining("'c'").withMessageContaining("Inventory.reserveArray");
			assertThat(redis.execute("EXISTS", "lock:{a}")).isEqualTo(0L);
			assertThatExceptionOfType(InvalidLockKeyException.class).isThrownBy(() -> inventory.reserveArray())
				.withMessageContaining("empty array");
			assertThat(inventory.calls()).isEqualTo(2);
			held.release();
		});
	}

	@Test
	void keysCanUseTheMethodAndTheTarget() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			Observation byMethod = inventory.byMethodName("sku-1");
			assertThat(byMethod.lease().key()).isEqualTo("byMethodName:sku-1");
			assertThat(byMethod.holdsInRedis()).isEqualTo("1"); // held at lock:{byMethodName:sku-1}
			Observation byTarget = inventory.byTarget("sku-2");
			assertThat(byTarget.lease().key()).isEqualTo("north:Inventory:sku-2");
			assertThat(byTarget.holdsInRedis()).isEqualTo("1");
		});
	}

	@Test
	void isoDurationsSetTheLeaseTimeAndTheWait() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			Observation seen = inventory.isoDurations("iso");
			assertThat(seen.lease().ttl()).isEqualTo(Duration.ofSeconds(6));
			// at most the 6s asked for (distlock.default-ttl would give about 30000); how far below depends on scheduling
			assertThat(seen.pttlInRedis()).isBetween(1L, 6000L);

			LockService locks = context.getBean(LockService.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("iso", Duration.ofSeconds(30), Duration.ZERO)).join();
			long start = System.nanoTime();
			assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> inventory.isoDurations("iso"))
				.satisfies(ex -> assertThat(ex.getWaitTime()).isEqualTo(Duration.ofMillis(300)));
			// waited the 300ms asked for, not distlock.default-wait-time (5s)
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(300), Duration.ofMillis(4900));
			held.release();
		});
	}

	@Test
	void keysCanUseArgumentsByIndexAndBeans() {
		run(context -> assertThat(context.getBean(Inventory.class).regional("sku-9").lease().key()).isEqualTo("sku-9:eu"));
	}

	@Test
	void placeholdersInDurationsResolveFromTheEnvironment() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			LockService locks = context.getBean(LockService.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("x", Duration.ofSeconds(30), Duration.ZERO)).join();
			long start = System.nanoTime();
			assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> inventory.reserveAll(List.of("x")))
				.satisfies(ex -> assertThat(ex.getWaitTime()).isEqualTo(Duration.ofMillis(400)));
			// waited the 400ms asked for, not distlock.default-wait-time (5s): the bound leaves room for a loaded machine
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(400), Duration.ofMillis(4900));
			held.release();
		}, "test.wait=400ms");
	}

	@Test
	void nullBlankAndEmptyKeysAreRejectedBeforeTheMethodRuns() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			assertThatExceptionOfType(InvalidLockKeyException.class).isThrownBy(() -> inventory.place(new Order(null, 1)))
				.withMessageContaining("Inventory.place").withMessageContaining("#order.sku()").withMessageContaining("null");
			assertThatExceptionOfType(InvalidLockKeyException.class).isThrownBy(() -> inventory.place(new Order("  ", 1)))
				.withMessageContaining("blank");
			assertThatExceptionOfType(InvalidLockKeyException.class).isThrownBy(() -> inventory.reserveAll(List.of()))
				.withMessageContaining("empty collection");
			assertThatExceptionOfType(InvalidLockKeyException.class)
				.isThrownBy(() -> inventory.reserveAll(java.util.Arrays.asList("a", null)))
				.withMessageContaining("null element");
			assertThat(inventory.calls()).isZero();
			assertThat(LockTestSupport.leftKeys(redis)).isEmpty();
		});
	}

	@Test
	void aBusyKeyThrowsSkipsOrGoesToTheFailureHandler() {
		run(context -> {
			Inventory inventory = context.getBean(Inventory.class);
			LockService locks = context.getBean(LockService.class);
			Lease held = CompletableFuture.supplyAsync(() -> locks.acquire("busy", Duration.ofSeconds(30), Duration.ZERO)).join();
			assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(() -> inventory.throwWhenBusy("busy"))
				.satisfies(ex -> assertThat(ex.getKey()).isEqualTo("busy"));
			assertThat(inventory.skipWhenBusy("busy")).isEmpty();
			assertThat(inventory.skipReturningInt("busy")).isZero();
			assertThat(inventory.handledWhenBusy("busy")).isEqualTo("handled busy after 0ms");
			assertThat(inventory.calls()).isZero();
			held.release();
			assertThat(inventory.skipWhenBusy("busy")).contains("ran");
			assertThat(inventory.calls()).isEqualTo(1);
		});
	}

	@Test
	void aLeaseLostDuringTheCallFailsItAfterTheMethodReturnsByDefault() {
		run(context -> assertThat(callThatLosesItsLease(context)).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
			.havingRootCause().isInstanceOf(LockLostException.class).withMessageContaining("fragile"));
	}

	@Test
	void aLeaseLostDuringTheCallIsOnlyLoggedWithOnLostLeaseWarn() {
		run(context -> assertThat(callThatLosesItsLease(context)).succeedsWithin(Duration.ofSeconds(10)).isEqualTo("finished"),
				"distlock.on-lost-lease=warn");
	}

	/** Starts a locked call, deletes its lease in Redis while it runs, then lets it return. */
	private CompletableFuture<Object> callThatLosesItsLease(AssertableApplicationContext context) {
		Inventory inventory = context.getBean(Inventory.class);
		CountDownLatch gone = new CountDownLatch(1);
		CompletableFuture<Object> call = CompletableFuture.supplyAsync(() -> {
			try {
				return inventory.outlive("fragile", gone);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> Long.valueOf(1).equals(redis.execute("EXISTS", "lock:{fragile}")));
		redis.execute("DEL", "lock:{fragile}");
		gone.countDown();
		return call;
	}

	/** Records, in order, what happens to the leases of one lock name. */
	static class LockEvents implements LockListener {

		private final String name;

		private final List<String> events = new CopyOnWriteArrayList<>();

		LockEvents(String name) {
			this.name = name;
		}

		/** The events so far, forgetting them. */
		List<String> drain() {
			List<String> drained = List.copyOf(this.events);
			this.events.clear();
			return drained;
		}

		@Override
		public void acquired(LockRequest request, Lease lease, Duration waited) {
			record(lease.name(), "acquire " + lease.key());
		}

		@Override
		public void notAcquired(LockRequest request, Duration waited, @Nullable RuntimeException failure) {
			record(request.effectiveName(), "miss " + request.key());
		}

		@Override
		public void released(Lease lease, Duration held, boolean wasOwned) {
			record(lease.name(), "release " + lease.key());
		}

		private void record(String name, String event) {
			if (name.equals(this.name)) {
				this.events.add(event);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Inventory inventory(StringRedisTemplate redis) {
			return new Inventory(redis);
		}

		@Bean
		Outer outer(Inventory inventory, StringRedisTemplate redis) {
			return new Outer(inventory, redis);
		}

		@Bean
		Accounts accounts(StringRedisTemplate redis) {
			return new DefaultAccounts(redis);
		}

		@Bean
		Regions regions() {
			return new Regions();
		}

		@Bean
		LockFailureHandler busyHandler() {
			return (LockFailure failure) -> "handled " + failure.key() + " after " + failure.waitTime().toMillis() + "ms";
		}

	}

}
