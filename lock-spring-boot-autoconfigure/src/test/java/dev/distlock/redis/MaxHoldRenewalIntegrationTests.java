package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static dev.distlock.redis.LockTestSupport.QUICK_RENEWALS;
import static dev.distlock.redis.LockTestSupport.RENEWAL_DEADLINE;
import static dev.distlock.redis.LockTestSupport.RENEWED_TTL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The cap of {@code maxHold} on the watchdogs of both Redis engines, against real servers: the lease is renewed until
 * its cap (so it is the cap, not a failed renewal, that ends it), lost then as {@code MAX_HOLD_EXCEEDED}, and never
 * renewed again: left alone, it lapses in Redis by itself within one lease time, which renewals every 600 ms would
 * never let happen. Leases of {@link LockTestSupport#RENEWED_TTL} renewed at {@link LockTestSupport#QUICK_RENEWALS},
 * capped at two lease times.
 */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MaxHoldRenewalIntegrationTests {

	private static final Duration MAX_HOLD = RENEWED_TTL.multipliedBy(2);

	private final List<LockLostEvent> losses = new CopyOnWriteArrayList<>();

	private final AtomicInteger renewals = new AtomicInteger();

	private final LockListener listener = new LockListener() {

		@Override
		public void renewed(String name, boolean success) {
			if (success) {
				MaxHoldRenewalIntegrationTests.this.renewals.incrementAndGet();
			}
		}

		@Override
		public void lost(LockLostEvent event) {
			MaxHoldRenewalIntegrationTests.this.losses.add(event);
		}

	};

	private RedisServer redis;

	private LockTestSupport support;

	@BeforeEach
	void start(RedisServer redis) {
		this.redis = redis;
		redis.execute("FLUSHALL");
		this.support = LockTestSupport.forServer(redis);
	}

	@AfterEach
	void stop() {
		this.support.close();
	}

	@Test
	void theWatchdogRenewsUntilTheCapAndNeverAfter() {
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(QUICK_RENEWALS)
			.listener(this.listener));
		long start = System.nanoTime();
		Lease lease = service.acquire(LockRequest.of("capped", RENEWED_TTL, Duration.ZERO).withMaxHold(MAX_HOLD));
		LockTestSupport.awaitRenewal(service, lease);
		assertThat(this.renewals.get()).as("renewed before the cap").isPositive();

		LockLostEvent loss = awaitLoss();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("held for its cap").isGreaterThanOrEqualTo(MAX_HOLD);
		assertThat(loss.detection()).as("the cap, not a failed renewal").isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
		assertThat(lease.isLost()).isTrue();
		assertThat(service.activeLeases()).singleElement().satisfies((snapshot) -> assertThat(snapshot.lost()).isTrue());

		// not renewed after the cap: the key lapses in Redis by itself
		await("the capped lease lapsing in Redis").atMost(RENEWED_TTL.plus(RENEWAL_DEADLINE))
			.until(() -> LockTestSupport.leftKeys(this.redis, "lock:*").isEmpty());
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies((ex) -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED));
		assertThat(this.losses).hasSize(1);
	}

	@Test
	void theHoldersReleaseAfterTheCapDeletesTheKey() {
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(QUICK_RENEWALS)
			.listener(this.listener));
		Lease lease = service.acquire(LockRequest.of("capped", RENEWED_TTL, Duration.ZERO).withMaxHold(RENEWED_TTL));
		assertThat(awaitLoss().detection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
		// renewed every 600 ms until the cap, the lease has most of its 6 s left in Redis: given up, not deleted
		assertThat(LockTestSupport.leftKeys(this.redis, "lock:*")).as("kept in Redis after the cap").isNotEmpty();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(LockTestSupport.leftKeys(this.redis, "lock:*")).as("deleted by the release").isEmpty();
	}

	@Test
	void redlockRenewsUntilTheCapAndNeverAfter() {
		try (RedlockNodesFixture nodes = new RedlockNodesFixture(3)) {
			RedlockLockService service = nodes.service(nodes.builder().renewalRatio(QUICK_RENEWALS).listener(this.listener));
			long start = System.nanoTime();
			Lease lease = service.acquire(LockRequest.of("capped", RENEWED_TTL, Duration.ZERO).withMaxHold(MAX_HOLD));
			await("a renewal").atMost(RENEWAL_DEADLINE).until(() -> this.renewals.get() > 0);

			LockLostEvent loss = awaitLoss();
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(MAX_HOLD);
			assertThat(loss.detection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED);
			// not renewed after the cap: the key lapses on every node by itself
			await("the capped lease lapsing on every node").atMost(RENEWED_TTL.plus(RENEWAL_DEADLINE))
				.until(() -> nodes.servers.stream().allMatch((node) -> LockTestSupport.leftKeys(node, "lock:*").isEmpty()));
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
				.satisfies((ex) -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.MAX_HOLD_EXCEEDED));
			assertThat(this.losses).hasSize(1);
		}
	}

	private LockLostEvent awaitLoss() {
		await("the loss at the cap").atMost(MAX_HOLD.plus(RENEWAL_DEADLINE)).until(() -> !this.losses.isEmpty());
		assertThat(this.losses).hasSize(1);
		return this.losses.get(0);
	}

}
