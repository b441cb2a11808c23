package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockMode;
import dev.distlock.redis.RedisLockService;
import dev.distlock.redis.LockTestSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@code @DistributedLock(fair = true)} through the interceptor, in a real context against a real Redis. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FairLockInterceptorIntegrationTests extends RedisContextFixture {

	@Test
	void aFairMethodQueuesAndSeesItsLeaseInTheLockContext() {
		DistributedLockInterceptorIntegrationTests.runner(this.redis)
			.withUserConfiguration(Beans.class)
			.withPropertyValues("distlock.fair-entry-ttl=1s")
			.run(context -> {
				Counter counter = context.getBean(Counter.class);
				RedisLockService service = context.getBean(RedisLockService.class);
				CountDownLatch entered = new CountDownLatch(1);
				CountDownLatch proceed = new CountDownLatch(1);
				CompletableFuture<Seen> first = CompletableFuture.supplyAsync(() -> counter.count("c1", entered, proceed));
				assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();
				CompletableFuture<Seen> second = CompletableFuture
					.supplyAsync(() -> counter.count("c1", new CountDownLatch(1), new CountDownLatch(0)));
				String queue = service.redisKey("c1") + ":q";
				await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
					.until(() -> Long.valueOf(1).equals(this.redis.execute("ZCARD", queue)));
				proceed.countDown();
				Seen one = first.get(20, TimeUnit.SECONDS);
				Seen two = second.get(20, TimeUnit.SECONDS);
				assertThat(one.token()).isPositive();
				assertThat(two.token()).isGreaterThan(one.token());
				assertThat(one.modes()).containsExactly(LockMode.FAIR);
				assertThat(LockTestSupport.leftKeys(this.redis)).isEmpty();
			});
	}

	record Seen(long token, List<LockMode> modes) {
	}

	static class Counter {

		private final RedisLockService service;

		Counter(RedisLockService service) {
			this.service = service;
		}

		@DistributedLock(key = "#id", fair = true, waitTime = "20s")
		Seen count(String id, CountDownLatch entered, CountDownLatch proceed) {
			entered.countDown();
			try {
				proceed.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return new Seen(LockContext.current().orElseThrow().fencingToken(),
					this.service.activeLeases().stream().map(LeaseSnapshot::mode).toList());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Counter counter(RedisLockService service) {
			return new Counter(service);
		}

	}

}
