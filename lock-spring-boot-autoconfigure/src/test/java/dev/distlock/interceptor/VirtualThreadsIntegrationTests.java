package dev.distlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.core.LockService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Annotated calls made on virtual threads ({@code spring.threads.virtual.enabled=true}): each virtual thread is its
 * own owner, so they exclude each other, and each sees its own lease. Runs on Java 21 and later (the build runs it on
 * the Temurin 25 JDK when it is installed).
 */
@EnabledForJreRange(min = JRE.JAVA_21)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class VirtualThreadsIntegrationTests extends RedisContextFixture {

	@Test
	void theEngineRenewsOnAVirtualThreadNamedByItsRole() {
		java.util.Set<Thread> renewers = java.util.concurrent.ConcurrentHashMap.newKeySet();
		DistributedLockInterceptorIntegrationTests.runner(redis)
			// renewed every 600 ms, the lease outlives stalls of 5 s (a 1.5 s one renewed every 500 ms did not, issue 32)
			.withPropertyValues("spring.threads.virtual.enabled=true",
					"distlock.renewal-ratio=" + dev.distlock.redis.LockTestSupport.QUICK_RENEWALS)
			.withBean(dev.distlock.core.LockListener.class, () -> new dev.distlock.core.LockListener() {
				@Override
				public void renewed(String name, boolean success) {
					renewers.add(Thread.currentThread());
				}
			})
			.run(context -> {
				dev.distlock.core.LockService locks = context.getBean(dev.distlock.core.LockService.class);
				try (dev.distlock.core.Lease lease = locks.acquire("virtual-renewal",
						dev.distlock.redis.LockTestSupport.RENEWED_TTL, java.time.Duration.ZERO)) {
					org.awaitility.Awaitility.await().atMost(dev.distlock.redis.LockTestSupport.RENEWAL_DEADLINE)
						.until(() -> !renewers.isEmpty());
				}
				assertThat(renewers).allSatisfy(thread -> {
					assertThat((Boolean) Thread.class.getMethod("isVirtual").invoke(thread)).isTrue();
					// renewals are applied, and listeners told, on the watchdog's renewal I/O threads
					assertThat(thread.getName()).startsWith("distlock-").endsWith("-watchdog-renewal-io");
				});
			});
	}

	@Test
	void annotatedCallsOnVirtualThreadsExcludeEachOther() {
		DistributedLockInterceptorIntegrationTests.runner(redis)
			.withConfiguration(AutoConfigurations.of(TaskExecutionAutoConfiguration.class))
			.withPropertyValues("spring.threads.virtual.enabled=true")
			.withBean(VirtualCounter.class)
			.run(context -> {
				AsyncTaskExecutor executor = context.getBean("applicationTaskExecutor", AsyncTaskExecutor.class);
				VirtualCounter counter = context.getBean(VirtualCounter.class);
				List<CompletableFuture<Object>> calls = new ArrayList<>();
				for (int i = 0; i < 200; i++) {
					calls.add(executor.submitCompletable(() -> {
						counter.increment("vt");
						return null;
					}));
				}
				CompletableFuture.allOf(calls.toArray(new CompletableFuture[0])).get(100, TimeUnit.SECONDS);
				assertThat(redis.execute("GET", "counter:vt")).isEqualTo("200");
				assertThat(counter.virtualThreadCalls()).isEqualTo(200);
				assertThat(counter.owners()).hasSizeGreaterThan(1);
			});
	}

	@Test
	void aLeaseAcquiredOnOneThreadIsReleasedFromAVirtualThread() {
		redis.execute("FLUSHALL");
		DistributedLockInterceptorIntegrationTests.runner(redis).run(context -> {
			LockService locks = context.getBean(LockService.class);
			Lease lease = locks.acquire("handed-to-a-virtual-thread", Duration.ofSeconds(30), Duration.ZERO);
			Thread releaser = (Thread) Thread.class.getMethod("startVirtualThread", Runnable.class)
				.invoke(null, (Runnable) lease::release);
			releaser.join(TimeUnit.SECONDS.toMillis(10));
			assertThat(lease.isHeld()).isFalse();
			assertThat(redis.execute("EXISTS", "lock:{handed-to-a-virtual-thread}")).isEqualTo(0L);
		});
	}

	public static class VirtualCounter {

		private final StringRedisTemplate redis;

		private volatile int virtualThreadCalls;

		private final Set<String> owners = ConcurrentHashMap.newKeySet();

		public VirtualCounter(StringRedisTemplate redis) {
			this.redis = redis;
		}

		public int virtualThreadCalls() {
			return this.virtualThreadCalls;
		}

		public Set<String> owners() {
			return this.owners;
		}

		@DistributedLock(key = "'counter:' + #name", ttl = "10s", waitTime = "60s")
		public void increment(String name) throws Exception {
			if ((Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread())) {
				this.virtualThreadCalls++; // guarded by the lock
			}
			this.owners.add(LockContext.current().orElseThrow().owner());
			TwoInstancesIntegrationTests.UnlockedCounter.readModifyWrite(this.redis, name);
		}

	}

}
