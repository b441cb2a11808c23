package dev.distlock.reactive;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.annotation.LockFailureHandler;
import dev.distlock.annotation.OnLockFailure;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.ReactiveLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.InvalidLockDeclarationException;
import dev.distlock.interceptor.RedisContextFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock} on methods returning {@code Mono}, {@code Flux} and {@code Publisher}: keys evaluated at the
 * call, the lock taken per subscription and held until the stream ends, the failure outcomes as stream outcomes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReactiveDistributedLockIntegrationTests extends RedisContextFixture {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	@BeforeEach
	void flush() {
		Orders.calls.set(0);
		Orders.linesLockedWhileEmitted.clear();
		Orders.lastKeyLocked.set(null);
	}

	private void run(Consumer<AssertableApplicationContext> test) {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					ReactiveLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s")
			.withUserConfiguration(Beans.class)
			.run(test::accept);
	}

	@Test
	void theLockIsTakenPerSubscriptionAndHeldUntilTheStreamEnds() {
		run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockService service = context.getBean(LockService.class);
			Mono<Boolean> call = orders.lockedWhileRunning("o-1");
			assertThat(Orders.calls).hasValue(0); // nothing runs before the subscription
			assertThat(service.isLocked("order:o-1")).isFalse();
			StepVerifier.create(call).expectNext(true).expectComplete().verify(DEADLINE);
			StepVerifier.create(call).expectNext(true).expectComplete().verify(DEADLINE);
			assertThat(Orders.calls).hasValue(2);
			assertThat(service.isLocked("order:o-1")).isFalse();
			StepVerifier.create(orders.lines("o-2")).expectNext("o-2:1", "o-2:2", "o-2:3").expectComplete().verify(DEADLINE);
			assertThat(Orders.linesLockedWhileEmitted).containsExactly(true, true, true);
			assertThat(service.isLocked("order:o-2")).isFalse();
			StepVerifier.create(Flux.from(orders.published("o-3"))).expectNext("o-3").expectComplete().verify(DEADLINE);
		});
	}

	@Test
	void severalKeysAreAllHeldAndAllReleased() {
		run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockService service = context.getBean(LockService.class);
			StepVerifier.create(orders.transfer("x", "y")).expectNext(List.of(true, true)).expectComplete().verify(DEADLINE);
			assertThat(service.isLocked("account:x")).isFalse();
			assertThat(service.isLocked("account:y")).isFalse();
			try (Lease held = service.acquire(LockRequest.of("account:y", Duration.ofSeconds(30), Duration.ZERO))) {
				StepVerifier.create(orders.transfer("x", "y")).expectError(LockAcquisitionTimeoutException.class)
					.verify(DEADLINE);
				assertThat(service.isLocked("account:x")).isFalse(); // all or none
			}
		});
	}

	@Test
	void theKeyIsEvaluatedAtTheCall() {
		run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockService service = context.getBean(LockService.class);
			StringBuilder id = new StringBuilder("a");
			Mono<Boolean> call = orders.lockedWhileRunningOn(id);
			id.replace(0, 1, "b");
			StepVerifier.create(call).expectNext(true).expectComplete().verify(DEADLINE);
			assertThat(Orders.lastKeyLocked.get()).isEqualTo("order:a");
			// a subscription's own owner, named in log lines and messages by the method (issue 29)
			assertThat(Orders.lastHolderLocked.get())
				.isEqualTo("reactive ReactiveDistributedLockIntegrationTests.Orders.lockedWhileRunningOn");
		});
	}

	@Test
	void failureOutcomesAreStreamOutcomes() {
		run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockService service = context.getBean(LockService.class);
			try (Lease held = service.acquire(LockRequest.of("order:busy", Duration.ofSeconds(30), Duration.ZERO))) {
				StepVerifier.create(orders.throwing("busy")).expectErrorSatisfies((ex) -> assertThat(ex)
					.isInstanceOf(LockAcquisitionTimeoutException.class)
					.hasMessageContaining("Orders.throwing(String)")).verify(DEADLINE);
				StepVerifier.create(orders.skipping("busy")).expectComplete().verify(DEADLINE);
				StepVerifier.create(orders.handled("busy")).expectNext("fallback:order:busy").expectComplete()
					.verify(DEADLINE);
				assertThat(Orders.calls).hasValue(0);
			}
		});
	}

	@Test
	void cancellingTheSubscriptionReleases() {
		run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockService service = context.getBean(LockService.class);
			Disposable subscription = orders.forever("o-9").subscribe();
			await().atMost(DEADLINE).until(() -> service.holder("order:o-9").isPresent());
			subscription.dispose();
			await().atMost(DEADLINE).until(() -> service.holder("order:o-9").isEmpty());
		});
	}

	@Test
	void aLostLeaseFailsTheMethodsStream() {
		run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockService service = context.getBean(LockService.class);
			EngineSupport.assumeLossNotices(service);
			StepVerifier.create(orders.foreverRenewed("o-10"))
				.then(() -> {
					await().atMost(DEADLINE).until(() -> service.holder("order:o-10").isPresent());
					redis.execute("DEL", "lock:{order:o-10}");
				})
				.expectError(LockLostException.class)
				.verify(DEADLINE);
		});
	}

	@Test
	void holdAtLeastOnAReactiveMethodFailsTheStartNamingIt() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					ReactiveLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
			.withBean(HoldAtLeastJob.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				Throwable cause = context.getStartupFailure();
				while (!(cause instanceof InvalidLockDeclarationException) && cause.getCause() != null) {
					cause = cause.getCause();
				}
				assertThat(cause).isInstanceOf(InvalidLockDeclarationException.class)
					.hasMessageContaining(HoldAtLeastJob.class.getName() + ".run()")
					.hasMessageContaining("'holdAtLeast' is not supported on a method that returns a reactive type");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Orders orders(LockService lockService) {
			return new Orders(lockService);
		}

		@Bean
		LockFailureHandler fallback() {
			return (failure) -> Mono.just("fallback:" + failure.key());
		}

	}

	static class Orders {

		// static: the test holds the bean's proxy, whose own fields are not the target's
		static final AtomicInteger calls = new AtomicInteger();

		static final List<Boolean> linesLockedWhileEmitted = new CopyOnWriteArrayList<>();

		static final AtomicReference<String> lastKeyLocked = new AtomicReference<>();

		static final AtomicReference<String> lastHolderLocked = new AtomicReference<>();

		private final LockService lockService;

		Orders(LockService lockService) {
			this.lockService = lockService;
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "0")
		public Mono<Boolean> lockedWhileRunning(String id) {
			calls.incrementAndGet();
			return Mono.fromCallable(() -> this.lockService.isLocked("order:" + id));
		}

		@DistributedLock(key = "'order:' + #id.toString()", waitTime = "0")
		public Mono<Boolean> lockedWhileRunningOn(CharSequence id) {
			return ReactiveLockService.currentLease().map((lease) -> {
				lastKeyLocked.set(lease.key());
				lastHolderLocked.set(lease.holder().ownerDescription());
				return this.lockService.isLocked(lease.key());
			});
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "0")
		public Flux<String> lines(String id) {
			return Flux.range(1, 3).map((i) -> {
				linesLockedWhileEmitted.add(this.lockService.isLocked("order:" + id));
				return id + ":" + i;
			});
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "0")
		public Publisher<String> published(String id) {
			return Mono.fromCallable(() -> this.lockService.isLocked("order:" + id) ? id : "not locked");
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "50ms")
		public Mono<String> throwing(String id) {
			calls.incrementAndGet();
			return Mono.just(id);
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "0", onFailure = OnLockFailure.SKIP)
		public Mono<String> skipping(String id) {
			calls.incrementAndGet();
			return Mono.just(id);
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "0", failureHandler = "fallback")
		public Mono<String> handled(String id) {
			calls.incrementAndGet();
			return Mono.just(id);
		}

		@DistributedLock(key = "{'account:' + #from, 'account:' + #to}", waitTime = "100ms")
		public Mono<List<Boolean>> transfer(String from, String to) {
			return Mono.fromCallable(() -> List.of(this.lockService.isLocked("account:" + from),
					this.lockService.isLocked("account:" + to)));
		}

		@DistributedLock(key = "'order:' + #id", waitTime = "0")
		public Mono<String> forever(String id) {
			return Mono.never();
		}

		// renewed every 2 s: the deletion, not a stall of a loaded machine, is what loses it (a 600 ms lease could be
		// lost before the test saw it held, issue 32)
		@DistributedLock(key = "'order:' + #id", waitTime = "0", ttl = "6s")
		public Mono<String> foreverRenewed(String id) {
			return Mono.never();
		}

	}

	static class HoldAtLeastJob {

		@DistributedLock(key = "'job'", waitTime = "0", holdAtLeast = "1s")
		public Mono<Void> run() {
			return Mono.empty();
		}

	}

}
