package dev.distlock.testing.autoconfigure;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.LockAcquisitionTimeoutException;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.LockScenarios;
import dev.distlock.testing.ManualLockClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

import static dev.distlock.testing.LockAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @AutoConfigureInMemoryLocks(manualClock = true)}: a {@code @DistributedLock} call's wait and another instance's
 * hold end exactly when the test moves the clock past them, whatever the machine's speed.
 */
@SpringBootTest(classes = AutoConfigureInMemoryLocksIntegrationTests.TinyApplication.class,
		properties = { "stock.wait-time=2s", "spring.autoconfigure.exclude="
				+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration" })
@AutoConfigureInMemoryLocks(manualClock = true)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AutoConfigureInMemoryLocksManualClockIntegrationTests {

	private static final String KEY = "stock:sku-1";

	private final ExecutorService caller = Executors.newSingleThreadExecutor();

	@Autowired
	Stock stock;

	@Autowired
	LockScenarios locks;

	@Autowired
	InMemoryLockService engine;

	@Test
	void aWaitEndsWhenTheClockPassesItsDeadlineAndAHoldWhenItsTimeRunsOut() {
		assertThat(this.locks.clock()).isInstanceOf(ManualLockClock.class);
		this.locks.holdElsewhere(KEY, Duration.ofSeconds(5));
		CompletableFuture<Integer> sale = CompletableFuture.supplyAsync(() -> this.stock.sell("sku-1"), this.caller);
		await().atMost(Duration.ofSeconds(30)).until(() -> this.engine.waitingThreads() == 1);

		this.locks.advance(Duration.ofSeconds(2));

		assertThat(sale).failsWithin(Duration.ofSeconds(30))
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(LockAcquisitionTimeoutException.class);
		assertThat(this.locks).wasBusy(KEY).waitedAtMost(KEY, Duration.ofSeconds(2));
		assertThat(this.locks.longestWait(KEY)).isEqualTo(Duration.ofSeconds(2));

		this.locks.advance(Duration.ofSeconds(3));

		assertThat(this.stock.sell("sku-1")).isEqualTo(1);
		assertThat(this.locks).acquired(KEY).times(1).releasedEverything();
	}

	@AfterEach
	void stop() {
		this.caller.shutdownNow();
	}

}
