package dev.distlock.interceptor;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.annotation.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.LockMetricsAutoConfiguration;
import dev.distlock.autoconfigure.ReactiveLockServiceAutoConfiguration;
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.observability.LockMetrics;
import dev.distlock.redis.LockTestSupport;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.event.EventListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @DistributedLock(maxHold = ...)} in real contexts against a real Redis: a call that holds its lock past its
 * longest hold loses it ({@code MAX_HOLD_EXCEEDED}: the event, the lost meter's {@code detection} tag,
 * {@link LockLostException} or the warning at return) and is told, each owner kind as it can be: the thread of a
 * blocking method is interrupted only with {@code distlock.max-hold-interrupt=true}, a future is cancelled, a
 * {@code Mono} fails. The leases are 3 s with a cap of 3 s, so the cap ends them whether or not a loaded machine
 * renewed them in time (the cap is checked before a renewal failure).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MaxHoldIntegrationTests extends RedisContextFixture {

	/** Far beyond the 3 s cap and any stall of a loaded machine; the work never ends by itself before it. */
	private static final Duration PATIENCE = Duration.ofSeconds(60);

	private final ExecutorService callers = Executors.newCachedThreadPool();

	@AfterEach
	void stopCallers() {
		this.callers.shutdownNow();
	}

	private ApplicationContextRunner runner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					RedisLockServiceAutoConfiguration.class, DistributedLockAutoConfiguration.class,
					ReactiveLockServiceAutoConfiguration.class, LockMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + this.redis.host(),
					"spring.data.redis.port=" + this.redis.port(), "spring.data.redis.timeout=2s")
			.withBean(SimpleMeterRegistry.class)
			.withBean(Losses.class)
			.withBean(Probe.class)
			.withBean(Work.class);
	}

	@Test
	void withInterruptOnABlockingMethodIsInterruptedAtItsMaxHoldAndTheCallThrows() {
		runner().withPropertyValues("distlock.max-hold-interrupt=true").run((context) -> {
			Work work = context.getBean(Work.class);
			Probe probe = context.getBean(Probe.class);
			Future<String> call = this.callers.submit(() -> work.blocking("interrupt-on"));
			assertThat(probe.started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
			// the call's own outcome: the method saw the interrupt, and the interceptor threw at its return
			assertThatExceptionOfType(java.util.concurrent.ExecutionException.class)
				.isThrownBy(() -> call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOfSatisfying(LockLostException.class, (ex) -> {
					assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
					assertThat(ex.getKey()).isEqualTo("interrupt-on");
				});
			assertThat(probe.outcomes).containsExactly("interrupted");
			assertLostOnce(context, "interrupt-on");
		});
	}

	@Test
	void withoutInterruptABlockingMethodRunsOnAndTheWarnPolicyReturnsItsResult() {
		runner().withPropertyValues("distlock.on-lost-lease=warn").run((context) -> {
			Work work = context.getBean(Work.class);
			Probe probe = context.getBean(Probe.class);
			Future<String> call = this.callers.submit(() -> work.blocking("interrupt-off"));
			assertThat(probe.started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
			Losses losses = context.getBean(Losses.class);
			await().atMost(PATIENCE).until(() -> losses.events.size() == 1);
			// the loss was told; the method was not interrupted: it runs until the test lets it finish
			assertThat(call.isDone()).isFalse();
			probe.finish.countDown();
			assertThat(call.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("finished");
			assertThat(probe.outcomes).containsExactly("finished");
			assertLostOnce(context, "interrupt-off");
		});
	}

	@Test
	void aFutureMethodHasItsFutureCancelledAtItsMaxHold() {
		runner().run((context) -> {
			Work work = context.getBean(Work.class);
			Probe probe = context.getBean(Probe.class);
			CompletableFuture<String> returned = work.async("async");
			assertThat(probe.started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
			CompletableFuture<String> source = probe.futures.get(0);
			await().atMost(PATIENCE).until(source::isCancelled);
			assertThatExceptionOfType(java.util.concurrent.ExecutionException.class)
				.isThrownBy(() -> returned.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOfSatisfying(LockLostException.class, (ex) -> assertThat(ex.getDetection())
					.isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED));
			assertLostOnce(context, "async");
			// the cancelled future released the lock
			await().atMost(PATIENCE)
				.untilAsserted(() -> assertThat(LockTestSupport.leftKeys(this.redis, "lock:*")).isEmpty());
		});
	}

	@Test
	void aMonoMethodFailsAtItsMaxHoldAndItsWorkIsCancelled() {
		runner().run((context) -> {
			Work work = context.getBean(Work.class);
			Probe probe = context.getBean(Probe.class);
			CompletableFuture<String> result = work.reactive("reactive").toFuture();
			assertThat(probe.started.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
			assertThatExceptionOfType(java.util.concurrent.ExecutionException.class)
				.isThrownBy(() -> result.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOfSatisfying(LockLostException.class, (ex) -> assertThat(ex.getDetection())
					.isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED));
			// the work itself is cancelled, not merely left behind by the failed stream
			await().atMost(PATIENCE).until(() -> probe.outcomes.contains("cancelled"));
			assertLostOnce(context, "reactive");
			await().atMost(PATIENCE)
				.untilAsserted(() -> assertThat(LockTestSupport.leftKeys(this.redis, "lock:*")).isEmpty());
		});
	}

	/** One loss of {@code key}, by its cap: published once, counted once under its detection tag. */
	private static void assertLostOnce(AssertableApplicationContext context, String key) {
		Losses losses = context.getBean(Losses.class);
		await().atMost(PATIENCE).until(() -> !losses.events.isEmpty());
		assertThat(losses.events).singleElement().satisfies((event) -> {
			assertThat(event.key()).isEqualTo(key);
			assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
		});
		MeterRegistry meters = context.getBean(MeterRegistry.class);
		await().atMost(PATIENCE).untilAsserted(() -> assertThat(meters.get(LockMetrics.LOST)
			.tag("detection", "max-hold-exceeded")
			.counter()
			.count()).isEqualTo(1.0));
		assertThat(LockMetrics.detectionTag(LockLostEvent.Detection.MAX_HOLD_EXCEEDED)).isEqualTo("max-hold-exceeded");
	}

	/** The application's view of the losses: the published events. */
	static class Losses {

		final List<LockLostEvent> events = new CopyOnWriteArrayList<>();

		@EventListener
		void onLoss(LockLostEvent event) {
			this.events.add(event);
		}

	}

	/** What the work saw; a bean of its own, as the locked bean is a proxy whose fields are not the target's. */
	static class Probe {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch finish = new CountDownLatch(1);

		final List<String> outcomes = new CopyOnWriteArrayList<>();

		final List<CompletableFuture<String>> futures = new CopyOnWriteArrayList<>();

	}

	/** Work that never ends by itself before the cap: it waits for the test, or for the interrupt or cancel. */
	public static class Work {

		private final Probe probe;

		public Work(Probe probe) {
			this.probe = probe;
		}

		@DistributedLock(key = "#key", ttl = "3s", maxHold = "3s", waitTime = "0")
		public String blocking(String key) {
			this.probe.started.countDown();
			try {
				if (this.probe.finish.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)) {
					this.probe.outcomes.add("finished");
					return "finished";
				}
				this.probe.outcomes.add("timed out");
				return "timed out";
			}
			catch (InterruptedException ex) {
				this.probe.outcomes.add("interrupted");
				return "interrupted";
			}
		}

		@DistributedLock(key = "#key", ttl = "3s", maxHold = "3s", waitTime = "0")
		public CompletableFuture<String> async(String key) {
			CompletableFuture<String> future = new CompletableFuture<>();
			this.probe.futures.add(future);
			this.probe.started.countDown();
			return future;
		}

		@DistributedLock(key = "#key", ttl = "3s", maxHold = "3s", waitTime = "0")
		public Mono<String> reactive(String key) {
			return Mono.<String>never()
				.doOnSubscribe((subscription) -> this.probe.started.countDown())
				.doOnCancel(() -> this.probe.outcomes.add("cancelled"))
				.subscribeOn(Schedulers.boundedElastic());
		}

	}

}
