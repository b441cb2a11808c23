package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** What the engine does when its Redis server restarts, stops or hangs: each test owns its server process. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockFaultIntegrationTests {

	private RedisServer server;

	private LockTestSupport support;

	private final List<LockLostEvent> lost = new CopyOnWriteArrayList<>();

	@BeforeEach
	void start() {
		this.server = RedisServer.start();
		this.support = LockTestSupport.forServer(this.server);
	}

	@AfterEach
	void stop() {
		this.support.close();
		this.server.close();
	}

	private RedisLockService service() {
		return service(RedisLockService.builder(this.support.connectionFactory()));
	}

	private RedisLockService service(RedisLockServiceBuilder builder) {
		return this.support.service(builder.listener(new LockListener() {
			@Override
			public void lost(LockLostEvent event) {
				LockFaultIntegrationTests.this.lost.add(event);
			}
		}));
	}

	@Test
	void aRestartThatLosesTheLeaseIsReportedWithinOneRenewalPeriod() {
		// renewed every 600 ms: a loaded machine's stall cannot make the lease run out before a renewal finds it gone
		Duration ttl = LockTestSupport.RENEWED_TTL;
		RedisLockService service = service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(LockTestSupport.QUICK_RENEWALS));
		Lease lease = service.acquire("restarted", ttl, Duration.ZERO);
		this.server.restart();
		long backAt = System.nanoTime();
		Duration renewalPeriod = Duration.ofMillis((long) (ttl.toMillis() * LockTestSupport.QUICK_RENEWALS));
		await().atMost(ttl.plusSeconds(10)).pollInterval(Duration.ofMillis(10)).until(lease::isLost);
		// at the next renewal, with room for a stall of 2.4 s: half the ttl, at which the clock alone would tell
		assertThat(Duration.ofNanos(System.nanoTime() - backAt)).isLessThanOrEqualTo(renewalPeriod.plusMillis(2_400));
		// the listeners hear of the loss just after the lease says it is lost (CI's redis-6.2 cell read the list between)
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.lost.isEmpty());
		assertThat(this.lost).singleElement().satisfies(event -> {
			assertThat(event.key()).isEqualTo("restarted");
			assertThat(event.owner()).isEqualTo(lease.owner());
			assertThat(event.fencingToken()).isEqualTo(lease.fencingToken());
			assertThat(event.detection()).isIn(LockLostEvent.Detection.RENEWAL_FOUND_GONE, LockLostEvent.Detection.RENEWAL_FAILED);
		});
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		// and the lock works again on the same service
		try (Lease again = service.acquire("restarted", ttl, Duration.ofSeconds(10))) {
			assertThat(again.fencingToken()).isGreaterThan(lease.fencingToken());
		}
	}

	@Test
	void aLeaseThatCannotBeRenewedForLongerThanItsTtlIsLost() {
		Duration ttl = Duration.ofMillis(900);
		RedisLockService service = service();
		Lease lease = service.acquire("frozen", ttl, Duration.ZERO);
		long pausedAt = System.nanoTime();
		this.server.pause(); // renewals hang: no answer, no error
		try {
			await().atMost(ttl.plusSeconds(10)).pollInterval(Duration.ofMillis(10)).until(lease::isLost);
			// at its ttl (a renewal's deadline is at most the ttl), with room for a loaded machine's stall of 2 s
			assertThat(Duration.ofNanos(System.nanoTime() - pausedAt)).isLessThan(ttl.plusMillis(2_500));
			// listeners hear of the loss on the watchdog's thread just after the lease is marked lost
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(this.lost).singleElement().satisfies(event -> {
				assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FAILED);
				assertThat(event.owner()).isEqualTo(lease.owner());
			}));
			assertThat(lease.isHeld()).isFalse();
		}
		finally {
			this.server.resume();
		}
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release)
			.satisfies(ex -> assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FAILED));
	}

	/** Found by LockChaosIntegrationTests: the holder of a lost lease must hear of the loss whether Redis answers or not. */
	@Test
	void aLostLeaseWhoseReleaseGoesUnansweredThrowsLockLostException() {
		Duration ttl = Duration.ofMillis(900);
		RedisLockService service = service();
		Lease lease = service.acquire("lost-unanswered", ttl, Duration.ZERO);
		this.server.pause();
		try {
			await().atMost(ttl.plusSeconds(10)).until(lease::isLost);
			assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release).satisfies(ex -> {
				assertThat(ex.getOwner()).isEqualTo(lease.owner());
				assertThat(ex.getDetection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FAILED);
				assertThat(ex.getSuppressed()).hasSize(1); // why the release itself failed
			});
		}
		finally {
			this.server.resume();
		}
		assertThat(service.activeLeases()).isEmpty();
		await().atMost(ttl.plusSeconds(10))
			.until(() -> Long.valueOf(0).equals(this.server.execute("EXISTS", service.redisKey("lost-unanswered"))));
		assertThat(this.lost).singleElement().satisfies(event -> assertThat(event.owner()).isEqualTo(lease.owner()));
	}

	@Test
	void anUnreachableServerFailsTheAcquisitionWithinTheWaitPlusTheCommandTimeoutAndLockingResumesAfterwards() {
		RedisLockService service = service();
		service.acquire("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
		this.server.stop();

		Duration wait = Duration.ofMillis(500);
		long start = System.nanoTime();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("down", Duration.ofSeconds(5), wait))
			.withMessageContaining("down");
		assertThat(Duration.ofNanos(System.nanoTime() - start))
			// room for a loaded machine's stall of 2 s; a second command timeout would not fit
			.isLessThan(wait.plus(LockTestSupport.COMMAND_TIMEOUT).plusMillis(2000));

		// a service that starts while Redis is down fails the same way
		RedisLockService late = service();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> late.tryAcquire("down", Duration.ofSeconds(5), Duration.ZERO));

		this.server.restart();
		await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(LockUnavailableException.class)
			.until(() -> service.tryAcquire("down", Duration.ofSeconds(5), Duration.ofSeconds(1)).map(lease -> {
				lease.release();
				return true;
			}).orElse(false));
		try (Lease lease = late.acquire("down", Duration.ofSeconds(5), Duration.ofSeconds(5))) {
			assertThat(lease.isHeld()).isTrue();
		}
	}

	@Test
	void aHungServerFailsTheAcquisitionWithinTheWaitPlusTheCommandTimeoutAndLockingResumesAfterwards() {
		RedisLockService service = service();
		service.acquire("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
		Duration wait = Duration.ofMillis(500);
		this.server.pause(); // connections stay open, nothing answers: the case a refused connection does not cover
		try {
			long start = System.nanoTime();
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("hung", Duration.ofSeconds(5), wait))
				.withMessageContaining("hung");
			assertThat(Duration.ofNanos(System.nanoTime() - start))
				// room for a loaded machine's stall of 2 s; a second command timeout would not fit
			.isLessThan(wait.plus(LockTestSupport.COMMAND_TIMEOUT).plusMillis(2000));
		}
		finally {
			this.server.resume();
		}
		try (Lease lease = service.acquire("hung", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
			assertThat(lease.isHeld()).isTrue();
		}
	}

	@Test
	void aWaiterHearsOfReleasesAgainAfterAServerRestart() {
		RedisLockService holder = service();
		RedisLockService waiter = service();
		assertWaiterIsWokenByARelease(holder, waiter); // opens the waiter's subscription connection
		this.server.restart();
		await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(LockUnavailableException.class)
			.until(() -> holder.tryAcquire("probe", Duration.ofSeconds(5), Duration.ZERO).map(lease -> {
				lease.release();
				return true;
			}).orElse(false));
		assertWaiterIsWokenByARelease(holder, waiter);
	}

	private static void assertWaiterIsWokenByARelease(RedisLockService holder, RedisLockService waiter) {
		Lease held = holder.acquire("resubscribed", Duration.ofSeconds(30), Duration.ZERO);
		Thread releaser = new Thread(() -> {
			await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10)).until(() -> waiter.waitingThreads() == 1);
			held.release();
		});
		releaser.start();
		long start = System.nanoTime();
		// the holder's lease is 30s: only a release message can end this wait early
		try (Lease lease = waiter.acquire("resubscribed", Duration.ofSeconds(30), Duration.ofSeconds(20))) {
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
		}
	}

}
