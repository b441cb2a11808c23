package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.test.redis.ConcurrentCalls;
import dev.distlock.redis.LockTestSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application contexts, as two instances of an application, call one annotated read-modify-write method
 * concurrently against one Redis: with the annotation no update is lost; without it (the same code) updates are lost.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TwoInstancesIntegrationTests extends RedisContextFixture {

	private static final int THREADS_PER_INSTANCE = 8;

	private static final int CALLS_PER_THREAD = 70;

	@Test
	void theAnnotatedMethodLosesNoUpdateAcrossInstances() throws Exception {
		int calls = callFromTwoInstances(context -> context.getBean(LockedCounter.class).increment("visits"));
		assertThat(calls).isGreaterThanOrEqualTo(1000);
		assertThat(redis.execute("GET", "counter:visits")).isEqualTo(Integer.toString(calls));
		assertThat(LockTestSupport.leftKeys(redis, "lock:*")).isEmpty();
	}

	@Test
	void theSameMethodWithoutTheAnnotationLosesUpdates() throws Exception {
		int calls = callFromTwoInstances(context -> context.getBean(UnlockedCounter.class).increment("visits"));
		assertThat(Integer.parseInt((String) redis.execute("GET", "counter:visits"))).isLessThan(calls);
	}

	private int callFromTwoInstances(Consumer<ApplicationContext> call) throws Exception {
		ApplicationContextRunner runner = DistributedLockInterceptorIntegrationTests.runner(redis)
			.withBean(LockedCounter.class).withBean(UnlockedCounter.class);
		int[] total = new int[1];
		runner.run(first -> runner.run(second -> {
			List<ApplicationContext> instances = List.of(first, second);
			total[0] = ConcurrentCalls.run(2 * THREADS_PER_INSTANCE, CALLS_PER_THREAD, Duration.ofSeconds(150),
					(thread) -> call.accept(instances.get(thread / THREADS_PER_INSTANCE)));
		}));
		return total[0];
	}

	/** A deliberately non-atomic increment: read, compute, write back. */
	public static class LockedCounter {

		private final StringRedisTemplate redis;

		public LockedCounter(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@DistributedLock(key = "'counter:' + #name", ttl = "10s", waitTime = "60s")
		public void increment(String name) {
			UnlockedCounter.readModifyWrite(this.redis, name);
		}

	}

	public static class UnlockedCounter {

		private final StringRedisTemplate redis;

		public UnlockedCounter(StringRedisTemplate redis) {
			this.redis = redis;
		}

		public void increment(String name) {
			readModifyWrite(this.redis, name);
		}

		static void readModifyWrite(StringRedisTemplate redis, String name) {
			String value = redis.opsForValue().get("counter:" + name);
			int next = (value == null) ? 1 : Integer.parseInt(value) + 1;
			redis.opsForValue().set("counter:" + name, Integer.toString(next));
		}

	}

}
