package dev.distlock.reactive;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.distlock.blockhound.BlockingCalls;
import dev.distlock.core.Lease;
import dev.distlock.core.LockHolder;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * No blocking call on a Reactor thread when {@link ReactiveLockService} acquires, waits, is cancelled and releases
 * on a blocking engine through the executor adapter: every subscription runs on Reactor's parallel (non-blocking)
 * threads with BlockHound installed, and every blocking call made on a non-blocking thread (Reactor's, or Lettuce's
 * event loop, where the engine's replies complete) is recorded ({@link BlockingCalls}) and fails the test, with its
 * stack, even where it happened inside a callback whose failure nobody would see. The contended phase runs several
 * rounds: a blocking call that needs contention (a lock another thread holds at that moment) is rare in one round.
 * <p>
 * Runs in a JVM of its own (the {@code blockhound} surefire execution, with
 * {@code -XX:+AllowRedefinitionToAddDeleteMethods}, which BlockHound needs on JDK 13+); skipped elsewhere.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReactiveLockServiceBlockHoundTests {

	private static final Duration DEADLINE = Duration.ofSeconds(30);

	/**
	 * Rounds of the contended phase (40 subscriptions on one key, 8 at a time): about 50 ms each; more with
	 * {@code -Ddistlock.blockhound.rounds=500}.
	 */
	private static final int ROUNDS = Integer.getInteger("distlock.blockhound.rounds", 20);

	private static RedisServer redis;

	@BeforeAll
	static void install(RedisServer server) {
		redis = server;
		BlockingCalls.install();
	}

	@AfterEach
	void noBlockingCall() {
		assertThat(BlockingCalls.recorded()).as("blocking calls on non-blocking threads").isEmpty();
	}

	@Test
	void throughTheExecutorAdapterOfABlockingEngineNoReactorThreadBlocks() {
		ReactiveLockServiceIntegrationTests.runner(redis).run((context) -> {
			LockService service = context.getBean(LockService.class);
			// the executor adapter's path, whatever the engine: a view of it that only blocks
			ReactiveLockService locks = ReactiveLockService.of(new BlockingOnly(service));
			assertThat(locks.getLockService().getClass().getSimpleName()).isEqualTo("ExecutorAsyncLockService");
			acquireWaitCancelAndRelease(service, locks, "blockhound:adapter");
			locks.close();
		});
	}

	@Test
	void throughTheRedisEnginesOwnAsynchronousAcquisitionNoReactorThreadBlocks() {
		ReactiveLockServiceIntegrationTests.runner(redis).run((context) -> {
			LockService service = context.getBean(LockService.class);
			// the auto-configured service: the Redis engine's native asynchronous acquisition and release
			ReactiveLockService locks = context.getBean(ReactiveLockService.class);
			assertThat(locks.getLockService()).isInstanceOf(RedisLockService.class);
			acquireWaitCancelAndRelease(service, locks, "blockhound:native");
		});
	}

	private static void acquireWaitCancelAndRelease(LockService service, ReactiveLockService locks, String key) {
		// BlockHound is active on the parallel threads
		StepVerifier.create(Mono.fromCallable(() -> {
			Thread.sleep(1);
			return 1;
		}).subscribeOn(Schedulers.parallel())).expectNext(1).expectComplete().verify(DEADLINE);
		assertThat(BlockingCalls.recorded()).singleElement().asString().startsWith("on parallel-")
			.contains("java.lang.Thread.sleep");
		BlockingCalls.clear();

		// contended: most subscriptions wait for the key, each takes it and releases it
		LockRequest request = LockRequest.of(key, Duration.ofSeconds(30), Duration.ofSeconds(30));
		for (int round = 0; round < ROUNDS; round++) {
			List<Integer> done = Flux.range(0, 40)
				.flatMap((i) -> Mono.defer(() -> locks.withLock(request, (lease) -> Mono.just(i).delayElement(
						Duration.ofMillis(1)))).subscribeOn(Schedulers.parallel()), 8)
				.collectList()
				.block(DEADLINE);
			assertThat(done).as("round %d", round).hasSize(40);
			assertThat(service.isLocked(key)).isFalse();
			assertThat(BlockingCalls.recorded()).as("blocking calls on non-blocking threads, round %d", round).isEmpty();
		}

		// cancelled while holding and while waiting, on a parallel thread
		Disposable holding = Mono.defer(() -> locks.withLock(request, (lease) -> Mono.never()))
			.subscribeOn(Schedulers.parallel()).subscribe();
		await().atMost(DEADLINE).until(() -> service.isLocked(key));
		Disposable waiting = Mono.defer(() -> locks.withLock(request, (lease) -> Mono.just(1)))
			.subscribeOn(Schedulers.parallel()).subscribe();
		Schedulers.parallel().schedule(waiting::dispose);
		Schedulers.parallel().schedule(holding::dispose);
		await().atMost(DEADLINE).until(() -> !service.isLocked(key));

		// the raw acquire and release, subscribed on a parallel thread
		StepVerifier.create(Mono.defer(() -> locks.acquire(request).flatMap(locks::release))
			.subscribeOn(Schedulers.parallel())).expectComplete().verify(DEADLINE);
	}

	/** The engine's blocking calls only, so that the reactive service adapts them with its executor. */
	private record BlockingOnly(LockService service) implements LockService {

		@Override
		public Optional<Lease> tryAcquire(LockRequest request) {
			return this.service.tryAcquire(request);
		}

		@Override
		public Optional<LockHolder> holder(String key) {
			return this.service.holder(key);
		}

	}

}
