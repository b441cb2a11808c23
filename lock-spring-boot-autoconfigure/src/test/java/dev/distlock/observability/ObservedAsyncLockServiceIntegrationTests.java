package dev.distlock.observability;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link ObservedLockService} as an {@link dev.distlock.core.AsyncLockService} (issue 13): asynchronous acquisitions
 * go to the engine, re-enter by owner, and are observed until their future completes.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ObservedAsyncLockServiceIntegrationTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	private LettuceConnectionFactory factory;

	private RedisLockService engine;

	private final ExecutorService executor = Executors.newFixedThreadPool(4);

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	private ObservedLockService observed;

	@BeforeEach
	void open(RedisServer redis) {
		redis.execute("FLUSHALL");
		this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()));
		this.factory.afterPropertiesSet();
		this.factory.start();
		this.engine = RedisLockService.builder(this.factory).build();
		this.observed = new ObservedLockService(this.engine, () -> this.registry, this.executor);
	}

	@AfterEach
	void close() {
		this.executor.shutdownNow();
		this.engine.close();
		this.factory.destroy();
	}

	@Test
	void anAsyncAcquisitionIsObservedUntilItsFutureCompletesAndReentersByOwner() throws Exception {
		LockOwner owner = LockOwner.newOwner();
		Lease lease = this.observed.acquireAsync(LockRequest.of("observed", TTL, Duration.ZERO), owner)
			.get(10, TimeUnit.SECONDS);
		assertThat(this.registry).hasObservationWithNameEqualTo("distlock.acquisition").that()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("distlock.outcome", "acquired");
		Lease reentered = this.observed.acquireAsync(LockRequest.of("observed", TTL, Duration.ZERO), owner)
			.get(10, TimeUnit.SECONDS);
		assertThat(reentered.fencingToken()).isEqualTo(lease.fencingToken());
		Optional<Lease> other = this.observed
			.tryAcquireAsync(LockRequest.of("observed", TTL, Duration.ofMillis(100)), LockOwner.newOwner())
			.get(10, TimeUnit.SECONDS);
		assertThat(other).isEmpty();
		assertThat(this.registry).hasNumberOfObservationsWithNameEqualTo("distlock.acquisition", 3)
			.hasAnObservation(observation -> observation.hasLowCardinalityKeyValue("distlock.outcome", "timed-out"));
		reentered.releaseAsync().get(10, TimeUnit.SECONDS);
		lease.releaseAsync().get(10, TimeUnit.SECONDS);
		assertThat(this.engine.isLocked("observed")).isFalse();
	}

	@Test
	void aCancelledAsyncAcquisitionIsObservedAsFailedAndLeavesNothingHeld() throws Exception {
		Lease held = this.engine.acquire("cancelled", TTL, Duration.ZERO);
		CompletableFuture<Optional<Lease>> waiting = this.observed
			.tryAcquireAsync(LockRequest.of("cancelled", TTL, Duration.ofSeconds(30)), LockOwner.newOwner());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.engine.waitingThreads() == 1);
		assertThat(waiting.cancel(false)).isTrue();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.engine.waitingThreads() == 0);
		assertThat(this.registry).hasSingleObservationThat()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("distlock.outcome", "failed");
		held.release();
		assertThat(this.engine.isLocked("cancelled")).isFalse();
		assertThat(this.engine.activeLeases()).isEmpty();
	}

}
