package dev.distlock.reactive;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.distlock.autoconfigure.ReactiveLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.Lease;
import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.RedisContextFixture;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link ReactiveLockService} on the Redis engine through the executor adapter, in a real context against a real
 * redis-server: per subscription acquisition, release on cancellation (holding or waiting), re-entry by the owner in
 * Reactor's context, and a lost lease failing the stream.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReactiveLockServiceIntegrationTests extends RedisContextFixture {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	static ApplicationContextRunner runner(RedisServer redis) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, ReactiveLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s");
	}

	private void run(Consumer<AssertableApplicationContext> test) {
		runner(redis).run(test::accept);
	}

	private static LockRequest request(String key, Duration wait) {
		return LockRequest.of(key, Duration.ofSeconds(30), wait);
	}

	@Test
	void autoConfiguredWithReactorAndBacksOffWithoutIt() {
		run((context) -> assertThat(context).hasSingleBean(ReactiveLockService.class));
		runner(redis).withClassLoader(new FilteredClassLoader(Mono.class))
			.run((context) -> assertThat(context).hasSingleBean(LockService.class)
				.doesNotHaveBean(ReactiveLockService.class));
		runner(redis).withBean("custom", ReactiveLockService.class,
				() -> new ReactiveLockService(dev.distlock.core.AsyncLockService.adapt(new dev.distlock.autoconfigure.InMemoryLockService(), Runnable::run)))
			.run((context) -> assertThat(context).getBean(ReactiveLockService.class)
				.isSameAs(context.getBean("custom")));
	}

	@Test
	void eachSubscriptionAcquiresHoldsWhileTheWorkRunsAndReleasesWhenItCompletes() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			LockService service = context.getBean(LockService.class);
			Mono<Boolean> locked = locks.withLock(request("stock:1", Duration.ZERO),
					(lease) -> Mono.fromCallable(() -> service.isLocked(lease.key()))
						.subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic()));
			StepVerifier.create(locked).expectNext(true).expectComplete().verify(DEADLINE);
			assertThat(service.isLocked("stock:1")).isFalse();
			// a second subscription of the same Mono acquires again
			StepVerifier.create(locked).expectNext(true).expectComplete().verify(DEADLINE);
			assertThat(service.isLocked("stock:1")).isFalse();
			// a Mono's value comes once the lease is released
			StepVerifier.create(locks.withLock(request("stock:1", Duration.ZERO), (lease) -> Mono.just(lease.key()))
				.map(service::isLocked)).expectNext(false).expectComplete().verify(DEADLINE);
			StepVerifier.create(locks.withLockMany(request("stock:1", Duration.ZERO),
					(lease) -> Flux.just(lease.key(), "b")).then(Mono.fromCallable(() -> service.isLocked("stock:1"))))
				.expectNext(false).expectComplete().verify(DEADLINE);
		});
	}

	@Test
	void theWorkFindsItsLeaseInTheContextAndAFailureReleases() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			LockService service = context.getBean(LockService.class);
			AtomicReference<Lease> seen = new AtomicReference<>();
			StepVerifier.create(locks.withLock(request("stock:2", Duration.ZERO),
					(lease) -> ReactiveLockService.currentLease().doOnNext(seen::set)
						.then(Mono.<String>error(new IllegalStateException("boom")))))
				.expectErrorMessage("boom").verify(DEADLINE);
			assertThat(seen.get().key()).isEqualTo("stock:2");
			assertThat(service.isLocked("stock:2")).isFalse();
			StepVerifier.create(ReactiveLockService.currentLease()).expectComplete().verify(DEADLINE);
		});
	}

	@Test
	void aKeyHeldElsewhereFailsWithTheTimeoutOrIsEmptyForTryAcquire() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			LockService service = context.getBean(LockService.class);
			try (Lease held = service.acquire(request("stock:3", Duration.ZERO))) {
				StepVerifier.create(locks.withLock(request("stock:3", Duration.ofMillis(100)), (lease) -> Mono.just(1)))
					.expectError(LockAcquisitionTimeoutException.class).verify(DEADLINE);
				StepVerifier.create(locks.tryAcquire(request("stock:3", Duration.ZERO)))
					.expectNext(Optional.empty()).expectComplete().verify(DEADLINE);
			}
			Lease lease = locks.acquire(request("stock:3", Duration.ZERO)).block(DEADLINE);
			assertThat(service.isLocked("stock:3")).isTrue();
			locks.release(lease).block(DEADLINE);
			assertThat(service.isLocked("stock:3")).isFalse();
		});
	}

	@Test
	void cancellingWhileHoldingReleasesAtOnce() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			LockService service = context.getBean(LockService.class);
			AtomicReference<Lease> held = new AtomicReference<>();
			Disposable subscription = locks.withLock(request("stock:4", Duration.ZERO),
					(lease) -> Mono.<String>never().doOnSubscribe((s) -> held.set(lease))).subscribe();
			await().atMost(DEADLINE).until(() -> held.get() != null);
			assertThat(service.holder("stock:4")).isPresent();
			subscription.dispose();
			await().atMost(DEADLINE).until(() -> service.holder("stock:4").isEmpty());
			assertThat(held.get().isHeld()).isFalse();
		});
	}

	@Test
	void cancellingWhileWaitingLeavesNoWaiterAndNoHold() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			LockService service = context.getBean(LockService.class);
			LockOperatorView view = context.getBean(LockOperatorView.class);
			Lease holder = service.acquire(request("stock:5", Duration.ZERO));
			AtomicReference<String> ran = new AtomicReference<>();
			Disposable waiting = locks.withLock(request("stock:5", Duration.ofSeconds(60)),
					(lease) -> Mono.fromRunnable(() -> ran.set("ran"))).subscribe();
			await().atMost(DEADLINE).until(() -> view.waitingThreads() == 1);
			waiting.dispose();
			await().atMost(DEADLINE).until(() -> view.waitingThreads() == 0);
			holder.release();
			assertThat(service.holder("stock:5")).isEmpty();
			assertThat(view.activeLeaseCount()).isZero();
			assertThat(ran.get()).isNull();
		});
	}

	@Test
	void aLostLeaseFailsTheStreamWithLockLostException() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			LockService service = context.getBean(LockService.class);
			EngineSupport.assumeLossNotices(service);
			AtomicReference<Lease> held = new AtomicReference<>();
			// renewed every 2 s: the deletion, not a stall of a loaded machine, is what loses it (a 600 ms lease could be
			// lost before the test saw it held, issue 32)
			LockRequest request = new LockRequest("stock:6", Duration.ofSeconds(6), Duration.ZERO, true, null);
			java.util.concurrent.atomic.AtomicBoolean cancelled = new java.util.concurrent.atomic.AtomicBoolean();
			StepVerifier.create(locks.withLockMany(request, (lease) -> Flux.<String>never()
					.doOnSubscribe((s) -> held.set(lease))
					.doOnCancel(() -> cancelled.set(true))))
				.then(() -> {
					await().atMost(DEADLINE).until(() -> held.get() != null);
					assertThat(service.isLocked("stock:6")).isTrue();
					redis.execute("DEL", "lock:{stock:6}"); // as an operator's force release, or an expiry, would
				})
				.expectError(LockLostException.class)
				.verify(DEADLINE);
			// the work itself is stopped, not only the stream failed past it
			assertThat(cancelled).isTrue();
		});
	}

	@Test
	void aLockedStreamInsideLockedWorkReEntersAndOthersDoNot() {
		run((context) -> {
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			EngineSupport.assumeReEntryByOwner(context.getBean(LockService.class));
			Mono<Boolean> nested = locks.withLock(request("stock:7", Duration.ZERO),
					(outer) -> ReactiveLockService.currentOwner()
						.flatMap((owner) -> locks.withLock(request("stock:7", Duration.ZERO),
								(inner) -> ReactiveLockService.currentOwner()
									.map((innerOwner) -> innerOwner == owner
											&& inner.fencingToken() == outer.fencingToken()))));
			StepVerifier.create(nested).expectNext(true).expectComplete().verify(DEADLINE);

			// another subscription, even from the same thread, is another owner: it does not get the held lease
			AtomicReference<Lease> held = new AtomicReference<>();
			Disposable holding = locks.withLock(request("stock:8", Duration.ZERO),
					(lease) -> Mono.<String>never().doOnSubscribe((s) -> held.set(lease))).subscribe();
			await().atMost(DEADLINE).until(() -> held.get() != null);
			StepVerifier.create(locks.tryAcquire(request("stock:8", Duration.ZERO)))
				.expectNext(Optional.empty()).expectComplete().verify(DEADLINE);
			holding.dispose();
			LockOwner mine = LockOwner.newOwner();
			StepVerifier.create(locks.tryAcquire(request("stock:8", Duration.ofSeconds(5)))
					.flatMap((lease) -> locks.release(lease.orElseThrow()).thenReturn(mine)))
				.expectNext(mine).expectComplete().verify(DEADLINE);
		});
	}

}
