package dev.distlock.reactive;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.ReactiveLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.AsyncLockService;
import dev.distlock.core.Lease;
import dev.distlock.core.LockOperatorView;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.interceptor.RedisContextFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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
 * A reactive caller that leaves just as its lease is granted leaves no hold (issue 25). Instance A holds a key;
 * instance B waits for it in a locked stream; A releases, and B's subscription is disposed on the thread that delivers
 * B's grant, after the engine granted it and before the work got it ({@link GrantWindow}). Afterwards neither Redis
 * nor B's engine holds the key, and the work never ran; before the fix B's engine kept the lease, renewed, for as long
 * as it lived.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CancelledGrantIntegrationTests extends RedisContextFixture {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private static final Duration TTL = Duration.ofSeconds(30);

	private final GrantWindow window = new GrantWindow();

	@BeforeEach
	void reset() {
		Jobs.runs.set(0);
	}

	/** Instance A (the holder) and instance B (the waiter, whose reactive locks cancel at the grant once armed). */
	private void run(TwoInstances test) {
		ReactiveLockServiceIntegrationTests.runner(redis).run((a) -> new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					ReactiveLockServiceAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s")
			.withBean(GrantWindow.class, () -> this.window)
			.withUserConfiguration(Beans.class)
			.run((b) -> test.run(a.getBean(LockService.class), b)));
	}

	/**
	 * A holds {@code keys}; {@code call} subscribes on B and waits for them; A releases while B's disposal is armed at
	 * the grant; then nothing is held and the work never ran.
	 */
	private void cancelledAtTheGrant(LockService a, AssertableApplicationContext b, Publisher<?> call, String... keys)
			throws InterruptedException {
		LockOperatorView view = b.getBean(LockOperatorView.class);
		List<Lease> held = Arrays.stream(keys)
			.map((key) -> a.acquire(LockRequest.of(key, TTL, Duration.ZERO)))
			.toList();
		Disposable waiting = Flux.from(call).subscribe();
		await().atMost(DEADLINE).until(() -> view.waitingThreads() == 1);
		this.window.cancelAtGrant(waiting::dispose);
		held.forEach(Lease::release);
		this.window.awaitCancelled();
		GrantWindow.assertNothingHeld(redis, view, keys);
		assertThat(Jobs.runs).as("the work ran").hasValue(0);
	}

	private static LockRequest waitFor(String key) {
		return LockRequest.of(key, TTL, Duration.ofSeconds(60));
	}

	private static <T> Function<Lease, Mono<T>> counted(T value) {
		return (lease) -> Mono.fromCallable(() -> {
			Jobs.runs.incrementAndGet();
			return value;
		});
	}

	@Test
	void aMonoDisposedAtItsGrantLeavesNoHold() {
		run((a, b) -> cancelledAtTheGrant(a, b,
				b.getBean(ReactiveLockService.class).withLock(waitFor("race:mono"), counted("done")), "race:mono"));
	}

	@Test
	void aFluxDisposedAtItsGrantLeavesNoHold() {
		run((a, b) -> cancelledAtTheGrant(a, b, b.getBean(ReactiveLockService.class)
			.withLockMany(waitFor("race:flux"), (lease) -> counted("line").apply(lease).repeat(2)), "race:flux"));
	}

	@Test
	void severalKeysDisposedAtTheLastGrantLeaveNoHold() {
		run((a, b) -> {
			ReactiveLockService locks = b.getBean(ReactiveLockService.class);
			// B takes the free first key at once, then waits for the second, which A holds
			cancelledAtTheGrant(a, b, locks.withLocks(List.of(waitFor("race:a"), waitFor("race:b")),
					(leases) -> counted("both").apply(leases.get(0)), null), "race:b");
			GrantWindow.assertNothingHeld(redis, b.getBean(LockOperatorView.class), "race:a");
		});
	}

	@Test
	void anAcquisitionDisposedAtItsGrantLeavesNoHold() {
		run((a, b) -> cancelledAtTheGrant(a, b, b.getBean(ReactiveLockService.class).acquire(waitFor("race:lease")),
				"race:lease"));
	}

	@Test
	void aGrantTheSubscriberHasNotRequestedYetIsReleasedWhenItLeaves() {
		run((a, b) -> {
			LockOperatorView view = b.getBean(LockOperatorView.class);
			Lease held = a.acquire(LockRequest.of("race:unrequested", TTL, Duration.ZERO));
			BaseSubscriber<Lease> unrequested = new BaseSubscriber<>() {

				@Override
				protected void hookOnSubscribe(Subscription subscription) {
					// requests nothing yet: the grant waits in the stream for a demand that never comes
				}

			};
			b.getBean(ReactiveLockService.class).acquire(waitFor("race:unrequested")).subscribe(unrequested);
			await().atMost(DEADLINE).until(() -> view.waitingThreads() == 1);
			this.window.cancelAtGrant(() -> {
			});
			held.release();
			this.window.awaitCancelled();
			assertThat(view.activeLeases()).as("granted, not yet handed over").hasSize(1);
			unrequested.dispose();
			GrantWindow.assertNothingHeld(redis, view, "race:unrequested");
		});
	}

	@Test
	void anAnnotatedMonoMethodDisposedAtItsGrantLeavesNoHold() {
		run((a, b) -> cancelledAtTheGrant(a, b, b.getBean(Jobs.class).run("m"), "job:m"));
	}

	@Test
	void anAnnotatedFluxMethodDisposedAtItsGrantLeavesNoHold() {
		run((a, b) -> cancelledAtTheGrant(a, b, b.getBean(Jobs.class).lines("f"), "job:f"));
	}

	@FunctionalInterface
	interface TwoInstances {

		void run(LockService a, AssertableApplicationContext b) throws Exception;

	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		ReactiveLockService reactiveLockService(GrantWindow window, LockService service) {
			return window.locks((AsyncLockService) service);
		}

		@Bean
		Jobs jobs() {
			return new Jobs();
		}

	}

	static class Jobs {

		static final AtomicInteger runs = new AtomicInteger();

		@DistributedLock(key = "'job:' + #id", waitTime = "60s")
		public Mono<String> run(String id) {
			return Mono.fromCallable(() -> {
				runs.incrementAndGet();
				return id;
			});
		}

		@DistributedLock(key = "'job:' + #id", waitTime = "60s")
		public Flux<String> lines(String id) {
			return Flux.range(1, 3).map((i) -> id + ":" + i).doOnSubscribe((s) -> runs.incrementAndGet());
		}

	}

}
