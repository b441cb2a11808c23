package dev.distlock.testing;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LockRequest;
import dev.distlock.observability.LockMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** The service's own contract beyond the TCK: its settings, its listeners (the starter's meters), its close. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InMemoryLockServiceTests {

	private static final Duration TTL = Duration.ofSeconds(30);

	@Test
	void theStartersMetersCountWhatTheEngineTellsItsListeners() {
		ManualLockClock clock = LockClock.manual();
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		InMemoryLockService service = InMemoryLockService.builder().clock(clock)
			.listener(new LockMetrics(meters))
			.build();
		Lease lease = service.acquire(LockRequest.of("k", TTL, Duration.ZERO).withName("orders"));
		assertThat(service.tryAcquire(LockRequest.of("k", TTL, Duration.ZERO).withName("orders"))).isPresent();
		clock.advance(TTL);
		assertThat(service.tryAcquireAsync(LockRequest.of("k", TTL, Duration.ZERO).withName("orders"),
				LockOwner.newOwner()).join()).isEmpty();
		service.store().lose("k");
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(meters.get(LockMetrics.ACQUIRE).tag("name", "orders").tag("outcome", "acquired").timer().count())
			.isEqualTo(2);
		assertThat(meters.get(LockMetrics.ACQUIRE).tag("name", "orders").tag("outcome", "timed-out").timer().count())
			.isEqualTo(1);
		assertThat(meters.get(LockMetrics.RENEWALS).tag("name", "orders").tag("outcome", "success").counter().count())
			.isEqualTo(1);
		assertThat(meters.get(LockMetrics.LOST).tag("name", "orders").counters()).extracting(Counter::count)
			.containsOnlyOnce(1.0)
			.containsOnly(0.0, 1.0);
		assertThat(meters.get(LockMetrics.RELEASES_GONE).tag("name", "orders").counter().count()).isEqualTo(1);
		assertThat(meters.get(LockMetrics.HELD).tag("name", "orders").timer().count()).isEqualTo(1);
	}

	@Test
	void aClosedInstanceAcquiresNothingAndItsLeasesExpireUnrenewed() throws Exception {
		ManualLockClock clock = LockClock.manual();
		InMemoryLockStore store = new InMemoryLockStore(clock);
		InMemoryLockService service = new InMemoryLockService(store);
		InMemoryLockService other = new InMemoryLockService(store);
		Lease lease = service.acquire("k", TTL, Duration.ZERO);
		service.close();
		assertThat(service.isClosed()).isTrue();
		assertThatIllegalStateException().isThrownBy(() -> service.tryAcquire("j", TTL, Duration.ZERO))
			.withMessageContaining("closed");
		CompletableFuture<Optional<Lease>> refused = service.tryAcquireAsync(LockRequest.of("j", TTL, Duration.ZERO),
				LockOwner.newOwner());
		assertThat(refused).isCompletedExceptionally();
		clock.advance(TTL.minusMillis(1));
		assertThat(other.isLocked("k")).isTrue();
		clock.advance(Duration.ofMillis(1));
		assertThat(other.isLocked("k")).isFalse();
		assertThat(lease.isLost()).as("expired, as a crashed instance's lease does").isFalse();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		other.close();
	}

	@Test
	void instancesOfOneStoreHaveDistinctClientIds() {
		InMemoryLockStore store = new InMemoryLockStore();
		InMemoryLockService first = InMemoryLockService.builder(store).clientId("app-1").build();
		assertThat(first.clientId()).isEqualTo("app-1");
		assertThat(new InMemoryLockService(store).clientId()).isNotEqualTo("app-1").hasSizeGreaterThan(20);
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryLockService.builder(store).clientId("app-1").build())
			.withMessageContaining("app-1");
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryLockService.builder(store).clientId("a:b"));
		assertThatIllegalStateException().isThrownBy(() -> InMemoryLockService.builder(store).clock(LockClock.system()));
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryLockService.builder().renewalRatio(1));
		first.close();
		assertThat(InMemoryLockService.builder(store).clientId("app-1").build().clientId())
			.as("free again once closed").isEqualTo("app-1");
	}

	@Test
	void asynchronousAcquisitionsCompleteOnCallbackThreadsNotTheReleasersThread() throws Exception {
		InMemoryLockService service = new InMemoryLockService();
		Lease held = service.acquire("k", TTL, Duration.ZERO);
		CompletableFuture<String> completedOn = service
			.tryAcquireAsync(LockRequest.of("k", TTL, TTL), LockOwner.newOwner())
			.thenApply((lease) -> {
				lease.orElseThrow().release();
				return Thread.currentThread().getName();
			});
		held.release();
		assertThat(completedOn.get(10, TimeUnit.SECONDS)).startsWith("distlock-in-memory-callback-");
	}

}
