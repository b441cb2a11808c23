package dev.distlock.interceptor;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockInterruptedException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.RedisLockService;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A caller of a future that gives up just as its lease is granted leaves no hold (issue 25): the engine granted the
 * lease (Redis holds it) and completes the caller's future with it at the moment the caller cancels, so the cancel
 * finds the future completed ({@link LateGrants}). Afterwards neither Redis nor the engine holds the key; before the
 * fix the engine kept the lease, renewed, for as long as it lived.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CancelledFutureGrantIntegrationTests extends RedisContextFixture {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static final Duration TTL = Duration.ofSeconds(30);

	@BeforeEach
	void reset() {
		Reports.runs.set(0);
	}

	private void run(ContextTest test) {
		DistributedLockInterceptorIntegrationTests.runner(redis).withUserConfiguration(Beans.class).run(test::run);
	}

	@Test
	void anAnnotatedFutureMethodWhoseCallerIsInterruptedAtTheGrantLeavesNoHold() {
		run((context) -> {
			LateGrants grants = context.getBean(LateGrants.class);
			Reports reports = context.getBean(Reports.class);
			AtomicReference<CompletableFuture<String>> returned = new AtomicReference<>();
			Thread caller = new Thread(() -> returned.set(reports.report("r-1")), "caller");
			caller.start();
			grants.awaitGranted();
			caller.interrupt(); // the caller gives up waiting as the grant lands
			caller.join(DEADLINE.toMillis());
			assertThat(caller.isAlive()).isFalse();
			assertThatExceptionOfType(ExecutionException.class)
				.isThrownBy(() -> returned.get().get(DEADLINE.toSeconds(), TimeUnit.SECONDS))
				.withCauseInstanceOf(LockInterruptedException.class);
			assertNothingHeld(grants.engine, "report:r-1");
			assertThat(Reports.runs).as("the method ran").hasValue(0);
		});
	}

	@Test
	void anAcquireAsyncCancelledAtTheGrantLeavesNoHold() {
		run((context) -> {
			LateGrants grants = context.getBean(LateGrants.class);
			CompletableFuture<Lease> lease = grants.acquireAsync(LockRequest.of("report:r-2", TTL, Duration.ofSeconds(60)),
					LockOwner.newOwner());
			grants.awaitGranted();
			assertThat(lease.cancel(true)).isTrue();
			assertNothingHeld(grants.engine, "report:r-2");
		});
	}

	private void assertNothingHeld(RedisLockService engine, String key) {
		await().atMost(DEADLINE)
			.untilAsserted(() -> assertThat(redis.execute("EXISTS", "lock:{" + key + "}"))
				.as("Redis holds lock '%s'", key).isEqualTo(0L));
		await().atMost(DEADLINE).untilAsserted(() -> assertThat(engine.activeLeases()).as("the engine's leases")
			.noneMatch((lease) -> lease.key().equals(key)));
	}

	@FunctionalInterface
	interface ContextTest {

		void run(AssertableApplicationContext context) throws Exception;

	}

	/**
	 * The Redis engine, whose grants reach the caller only as it gives up: the future of {@link #tryAcquireAsync}
	 * completes with the engine's lease when it is cancelled, before the cancel takes effect, as when the grant lands
	 * just before the cancel; the cancel then finds it completed and returns false.
	 */
	static final class LateGrants implements AsyncLockService {

		final RedisLockService engine;

		private final CountDownLatch granted = new CountDownLatch(1);

		LateGrants(RedisLockService engine) {
			this.engine = engine;
		}

		@Override
		public CompletableFuture<Optional<Lease>> tryAcquireAsync(LockRequest request, LockOwner owner) {
			CompletableFuture<Optional<Lease>> grant = this.engine.tryAcquireAsync(request, owner);
			grant.thenRun(this.granted::countDown);
			return new CompletableFuture<>() {

				@Override
				public boolean cancel(boolean mayInterruptIfRunning) {
					complete(grant.join()); // the grant came first
					return super.cancel(mayInterruptIfRunning);
				}

			};
		}

		@Override
		public Optional<Lease> tryAcquire(LockRequest request) {
			return this.engine.tryAcquire(request);
		}

		@Override
		public Optional<LockHolder> holder(String key) {
			return this.engine.holder(key);
		}

		void awaitGranted() throws InterruptedException {
			assertThat(this.granted.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("the engine granted").isTrue();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		RedisLockService engine(RedisConnectionFactory connectionFactory) {
			return RedisLockService.builder(connectionFactory).build();
		}

		@Bean
		@Primary
		LateGrants lockService(RedisLockService engine) {
			return new LateGrants(engine);
		}

		@Bean
		Reports reports() {
			return new Reports();
		}

	}

	static class Reports {

		static final AtomicInteger runs = new AtomicInteger();

		@DistributedLock(key = "'report:' + #id", waitTime = "60s")
		public CompletableFuture<String> report(String id) {
			runs.incrementAndGet();
			return CompletableFuture.completedFuture(id);
		}

	}

}
