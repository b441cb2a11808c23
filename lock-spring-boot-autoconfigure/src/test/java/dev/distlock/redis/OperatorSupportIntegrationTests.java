package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.ForcedRelease;
import dev.distlock.core.Lease;
import dev.distlock.core.LockListener;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.RenewalStatus;
import dev.distlock.test.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** What the engine offers operators: the lease count, the renewal status, and a forced release. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OperatorSupportIntegrationTests {

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

	private RedisLockService service(double renewalRatio) {
		return this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(renewalRatio)
			.listener(new LockListener() {
				@Override
				public void lost(LockLostEvent event) {
					OperatorSupportIntegrationTests.this.lost.add(event);
				}
			}));
	}

	@Test
	void activeLeaseCountCountsLeasesNotHolds() {
		RedisLockService service = service(1.0 / 3);
		assertThat(service.activeLeaseCount()).isZero();
		Lease a = service.acquire("a", Duration.ofSeconds(10), Duration.ZERO);
		Lease again = service.acquire("a", Duration.ofSeconds(10), Duration.ZERO);
		Lease b = service.acquire("b", Duration.ofSeconds(10), Duration.ZERO);
		assertThat(service.activeLeaseCount()).isEqualTo(2).isEqualTo(service.activeLeases().size());
		again.release();
		assertThat(service.activeLeaseCount()).isEqualTo(2);
		a.release();
		b.release();
		assertThat(service.activeLeaseCount()).isZero();
	}

	@Test
	void forceReleaseDeletesAnotherOwnersLeaseWakesItsWaiterAndTheHolderFindsItLost() throws Exception {
		RedisLockService holderService = service(0.1);
		RedisLockService operator = this.support.service();
		Lease held = holderService.acquire("stuck", Duration.ofSeconds(5), Duration.ZERO);

		// a waiter that would otherwise wait for the whole 20 s
		CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
				() -> operator.acquire("stuck", Duration.ofSeconds(10), Duration.ofSeconds(20)));
		await().atMost(Duration.ofSeconds(10)).until(() -> operator.waitingThreads() == 1);

		Optional<ForcedRelease> forced = operator.forceRelease("stuck");
		assertThat(forced).hasValueSatisfying(release -> {
			assertThat(release.key()).isEqualTo("stuck");
			assertThat(release.owner()).isEqualTo(held.owner());
			assertThat(release.holdCount()).isEqualTo(1);
			assertThat(release.fencingToken()).isEqualTo(held.fencingToken());
		});
		Lease next = waiter.get(10, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());

		// the holder's watchdog renews every 500 ms and finds the lease gone
		await().atMost(Duration.ofSeconds(5)).until(held::isLost);
		// the listeners hear of the loss just after the lease says it is lost
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.lost.isEmpty());
		assertThat(this.lost).singleElement().satisfies(event -> {
			assertThat(event.detection()).isEqualTo(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
			// the holder's owner, not the operator's or the next holder's
			assertThat(event.owner()).isEqualTo(held.owner()).isNotEqualTo(next.owner());
		});
		assertThatExceptionOfType(LockLostException.class).isThrownBy(held::release);
		next.release();

		assertThat(operator.forceRelease("stuck")).isEmpty();
	}

	@Test
	void renewalStatusReportsFailingRenewalsWhileRedisHangsAndRecoversAfterASuccessfulRenewal() {
		// lease time 20 s renewed every second: an outage of a few seconds fails renewals without losing the lease
		RedisLockService service = service(0.05);
		Lease lease = service.acquire("hung", Duration.ofSeconds(20), Duration.ZERO);
		assertThat(service.renewalStatus()).isEqualTo(RenewalStatus.HEALTHY);
		this.server.pause();
		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> service.renewalStatus().isFailing());
			RenewalStatus status = service.renewalStatus();
			assertThat(status.failingLeases()).isEqualTo(1);
			assertThat(status.failingSince()).isNotNull();
			assertThat(status.lastError()).isNotBlank();
		}
		finally {
			this.server.resume();
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> !service.renewalStatus().isFailing());
		assertThat(lease.isHeld()).isTrue();
		assertThat(service.activeLeases()).singleElement().satisfies(snapshot -> assertThat(snapshot.lastRenewal()).isNotNull());
		lease.release();
		assertThat(this.lost).isEmpty();
	}

}
