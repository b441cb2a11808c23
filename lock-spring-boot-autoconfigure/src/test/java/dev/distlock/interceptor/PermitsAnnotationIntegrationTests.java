package dev.distlock.interceptor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockContext;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.redis.LockTestSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock(permits = N)} through the interceptor in real contexts on the Redis engine (issue 30): eight
 * threads never have more than three inside a method of three permits (counted by the method itself) and do get three
 * in at once; a nested call re-enters its permit; two declarations with another number of permits on one key are
 * refused when they overlap, naming the key and both numbers; a {@code CompletableFuture} method holds its permit until
 * its future completes, as a lock.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PermitsAnnotationIntegrationTests extends RedisContextFixture {

	/** Generous against a loaded machine: every wait asserts an order or a state, never a speed. */
	private static final long DEADLINE_SECONDS = 60;

	private ApplicationContextRunner runner() {
		return DistributedLockInterceptorIntegrationTests.runner(this.redis).withUserConfiguration(Beans.class);
	}

	@Test
	void eightThreadsNeverHaveMoreThanThreeInsideAndThreeGetInAtOnce() {
		runner().run((context) -> {
			PartnerApi api = context.getBean(PartnerApi.class);
			ExecutorService threads = Executors.newFixedThreadPool(8);
			try {
				List<Future<Lease>> calls = new ArrayList<>();
				for (int i = 0; i < 8 * 5; i++) {
					calls.add(threads.submit(api::call));
				}
				for (Future<Lease> call : calls) {
					Lease lease = call.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
					assertThat(lease.key()).isEqualTo("partner-api");
				}
			}
			finally {
				threads.shutdownNow();
			}
			assertThat(api.calls()).isEqualTo(40);
			assertThat(api.mostInside()).isEqualTo(3);
			assertThat(api.permitsInRedis()).isEqualTo("3");
			assertThat(LockTestSupport.leftKeys(this.redis, "lock:*")).isEmpty();
		});
	}

	@Test
	void aNestedCallOnTheKeyReentersItsPermitAndTakesNoSecondOne() {
		runner().run((context) -> {
			Lease[] leases = context.getBean(Reports.class).outerThenInner();
			assertThat(leases[1].fencingToken()).isEqualTo(leases[0].fencingToken());
			assertThat(leases[1].owner()).isEqualTo(leases[0].owner());
			// the owner's one permit, held twice inside the nested call and once again after it
			assertThat(context.getBean(ReportParts.class).holdsSeenInside()).isEqualTo("2");
			assertThat(context.getBean(Reports.class).holdsSeenAfter()).isEqualTo("1");
			assertThat(LockTestSupport.leftKeys(this.redis, "lock:*")).isEmpty();
		});
	}

	@Test
	void twoDeclarationsWithAnotherNumberOfPermitsOnOneKeyAreRefusedWhenTheyOverlap() {
		runner().run((context) -> {
			Tenant tenant = context.getBean(Tenant.class);
			ExecutorService thread = Executors.newSingleThreadExecutor();
			try {
				Future<String> holding = thread.submit(tenant::importWithThreePermits);
				assertThat(tenant.awaitEntered()).isTrue();
				assertThatIllegalStateException().isThrownBy(tenant::exportWithFivePermits)
					.withMessageContaining("'tenant-7'")
					.withMessageContaining("semaphore of 3 permits")
					.withMessageContaining("asks for 5 permits");
				tenant.release();
				assertThat(holding.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isEqualTo("imported");
				// once nobody holds the key, the other declaration sets its own number
				assertThat(tenant.exportWithFivePermits()).isEqualTo("exported");
			}
			finally {
				tenant.release();
				thread.shutdownNow();
			}
		});
	}

	@Test
	void aCompletableFutureMethodHoldsItsPermitUntilItsFutureCompletes() throws Exception {
		runner().run((context) -> {
			Renderer renderer = context.getBean(Renderer.class);
			CompletableFuture<String> firstWork = new CompletableFuture<>();
			CompletableFuture<String> secondWork = new CompletableFuture<>();
			// each invocation is an owner of its own: two permits, two invocations in at once
			CompletableFuture<String> first = renderer.render(firstWork);
			CompletableFuture<String> second = renderer.render(secondWork);
			assertThat(first).isNotDone();
			assertThat(second).isNotDone();
			assertThat(this.redis.execute("HGET", "lock:{renderer}", "~p")).isEqualTo("2");
			assertThatExceptionOfType(LockAcquisitionTimeoutException.class).isThrownBy(renderer::renderNow);
			firstWork.complete("first");
			// the caller's future completes after the release: a third caller gets the permit back at once
			assertThat(first.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isEqualTo("first");
			assertThat(renderer.renderNow()).isEqualTo("rendered");
			secondWork.complete("second");
			assertThat(second.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isEqualTo("second");
			await().atMost(Duration.ofSeconds(DEADLINE_SECONDS))
				.until(() -> LockTestSupport.leftKeys(this.redis, "lock:*").isEmpty());
		});
	}

	@Test
	void aReactiveMethodOnSeveralKeysTakesAPermitOfEach() {
		runner().run((context) -> {
			Batches batches = context.getBean(Batches.class);
			// the later keys of a reactive acquisition get what is left of the wait: they keep their permits too
			List<Object> seen = batches.importBoth().block(Duration.ofSeconds(DEADLINE_SECONDS));
			assertThat(seen).containsExactly("2", "2");
			await().atMost(Duration.ofSeconds(DEADLINE_SECONDS))
				.until(() -> LockTestSupport.leftKeys(this.redis, "lock:*").isEmpty());
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Batches batches(StringRedisTemplate redis) {
			return new Batches(redis);
		}

		@Bean
		PartnerApi partnerApi(StringRedisTemplate redis) {
			return new PartnerApi(redis);
		}

		@Bean
		ReportParts reportParts(StringRedisTemplate redis) {
			return new ReportParts(redis);
		}

		@Bean
		Reports reports(ReportParts parts, StringRedisTemplate redis) {
			return new Reports(parts, redis);
		}

		@Bean
		Tenant tenant() {
			return new Tenant();
		}

		@Bean
		Renderer renderer() {
			return new Renderer();
		}

	}

	static class PartnerApi {

		final AtomicInteger inside = new AtomicInteger();

		final AtomicInteger mostInside = new AtomicInteger();

		final AtomicInteger calls = new AtomicInteger();

		/** The first three calls wait here for each other: proof that three get in at once, not one after the other. */
		final CountDownLatch threeInside = new CountDownLatch(3);

		volatile Object permitsInRedis;

		private final StringRedisTemplate redis;

		PartnerApi(StringRedisTemplate redis) {
			this.redis = redis;
		}

		// read through methods: the test holds the bean's proxy, whose own fields are not the target's

		public int calls() {
			return this.calls.get();
		}

		public int mostInside() {
			return this.mostInside.get();
		}

		public Object permitsInRedis() {
			return this.permitsInRedis;
		}

		@DistributedLock(key = "'partner-api'", permits = 3, ttl = "30s", waitTime = "60s")
		public Lease call() throws InterruptedException {
			int now = this.inside.incrementAndGet();
			try {
				this.mostInside.accumulateAndGet(now, Math::max);
				this.calls.incrementAndGet();
				this.threeInside.countDown();
				this.threeInside.await(DEADLINE_SECONDS, TimeUnit.SECONDS);
				this.permitsInRedis = this.redis.opsForHash().get("lock:{partner-api}", "~p");
				return LockContext.current().orElseThrow();
			}
			finally {
				this.inside.decrementAndGet();
			}
		}

	}

	static class ReportParts {

		private final StringRedisTemplate redis;

		volatile Object holdsSeenInside;

		ReportParts(StringRedisTemplate redis) {
			this.redis = redis;
		}

		public Object holdsSeenInside() {
			return this.holdsSeenInside;
		}

		@DistributedLock(key = "'reports'", permits = 2)
		public Lease inner() {
			Lease lease = LockContext.current().orElseThrow();
			this.holdsSeenInside = this.redis.opsForHash().get("lock:{reports}", lease.owner());
			return lease;
		}

	}

	static class Reports {

		private final ReportParts parts;

		private final StringRedisTemplate redis;

		volatile Object holdsSeenAfter;

		Reports(ReportParts parts, StringRedisTemplate redis) {
			this.parts = parts;
			this.redis = redis;
		}

		public Object holdsSeenAfter() {
			return this.holdsSeenAfter;
		}

		@DistributedLock(key = "'reports'", permits = 2)
		public Lease[] outerThenInner() {
			Lease outer = LockContext.current().orElseThrow();
			Lease inner = this.parts.inner();
			this.holdsSeenAfter = this.redis.opsForHash().get("lock:{reports}", outer.owner());
			return new Lease[] { outer, inner };
		}

	}

	static class Tenant {

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(DEADLINE_SECONDS, TimeUnit.SECONDS);
		}

		public void release() {
			this.release.countDown();
		}

		@DistributedLock(key = "'tenant-7'", permits = 3, waitTime = "0")
		public String importWithThreePermits() throws InterruptedException {
			this.entered.countDown();
			this.release.await(DEADLINE_SECONDS, TimeUnit.SECONDS);
			return "imported";
		}

		@DistributedLock(key = "'tenant-7'", permits = 5, waitTime = "0")
		public String exportWithFivePermits() {
			return "exported";
		}

	}

	static class Batches {

		private final StringRedisTemplate redis;

		Batches(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@DistributedLock(key = "{'batch:a', 'batch:b'}", permits = 2)
		public Mono<List<Object>> importBoth() {
			// read while the stream holds both keys' permits: each semaphore's number as Redis has it (null if none)
			return Mono.fromCallable(() -> Arrays.asList(this.redis.opsForHash().get("lock:{batch:a}", "~p"),
					this.redis.opsForHash().get("lock:{batch:b}", "~p")));
		}

	}

	static class Renderer {

		@DistributedLock(key = "'renderer'", permits = 2, waitTime = "0")
		public CompletableFuture<String> render(CompletableFuture<String> work) {
			return work;
		}

		@DistributedLock(key = "'renderer'", permits = 2, waitTime = "0")
		public String renderNow() {
			return "rendered";
		}

	}

}
