package dev.distlock.observability;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.redis.LockTestSupport;
import dev.distlock.redis.RedisLockService;
import dev.distlock.test.redis.RedisServer;
import dev.distlock.test.redis.RedisServerExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** Each lock meter moves as the engine acquires, contends, renews, loses and releases leases on a real Redis. */
@ExtendWith(RedisServerExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockMetricsIntegrationTests {

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

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

	private RedisLockService service(double renewalRatio) {
		RedisLockService service = this.support.service(RedisLockService.builder(this.support.connectionFactory())
			.renewalRatio(renewalRatio)
			.listener(new LockMetrics(this.registry)));
		// a fresh snapshot on every read, so that each gauge read here shows the state at that moment
		new LockServiceMetrics(service, Duration.ZERO).bindTo(this.registry);
		return service;
	}

	private static LockRequest request(String key, Duration ttl, Duration wait) {
		return LockRequest.of(key, ttl, wait).withName("inventory");
	}

	@Test
	void metersFollowAcquisitionContentionRenewalLossAndRelease() throws Exception {
		// lease time 5 s renewed every 250 ms: renewals come soon, and a loaded machine does not lose the lease
		RedisLockService service = service(0.05);

		Lease lease = service.acquire(request("sku-1", Duration.ofSeconds(5), Duration.ZERO));
		assertThat(acquire("acquired").count()).isEqualTo(1);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isEqualTo(1);
		assertThat(gauge(LockServiceMetrics.WAITERS, "inventory")).isZero();
		assertThat(acquire("timed-out").count()).isZero();
		assertThat(lost("renewal-found-gone").count()).isZero(); // all meters of a name exist from its first use

		// contention: another thread waits 1 s for the key and gives up
		CompletableFuture<Optional<Lease>> contender = CompletableFuture
			.supplyAsync(() -> service.tryAcquire(request("sku-1", Duration.ofSeconds(5), Duration.ofSeconds(1))));
		await().atMost(DEADLINE).until(() -> gauge(LockServiceMetrics.WAITERS, "inventory") == 1);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isEqualTo(1);
		assertThat(contender.get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(acquire("timed-out").count()).isEqualTo(1);
		assertThat(acquire("timed-out").totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(1000);
		assertThat(gauge(LockServiceMetrics.WAITERS, "inventory")).isZero();

		// renewal by the watchdog
		await().atMost(DEADLINE).until(() -> renewals("success").count() >= 1);
		assertThat(renewals("failure").count()).isZero();

		// loss: the key is deleted behind the holder's back; the next renewal finds it gone
		this.redis.execute("DEL", "lock:{sku-1}");
		await().atMost(DEADLINE).until(() -> lost("renewal-found-gone").count() == 1);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isZero(); // lost: no longer held

		// the holder's release finds the lease gone
		assertThat(this.registry.get(LockMetrics.HELD).tag("name", "inventory").timer().count()).isZero();
		assertThatExceptionOfType(LockLostException.class).isThrownBy(lease::release);
		assertThat(releasesGone().count()).isEqualTo(1);
		assertThat(this.registry.get(LockMetrics.HELD).tag("name", "inventory").timer().count()).isEqualTo(1);

		// an ordinary hold and release
		service.acquire(request("sku-1", Duration.ofSeconds(5), Duration.ZERO)).release();
		assertThat(acquire("acquired").count()).isEqualTo(2);
		assertThat(this.registry.get(LockMetrics.HELD).tag("name", "inventory").timer().count()).isEqualTo(2);
		assertThat(releasesGone().count()).isEqualTo(1);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isZero();
		assertThat(lost("renewal-found-gone").count()).isEqualTo(1);
	}

	@Test
	void theGaugesOfEachNameCountItsLeasesAndWaitersFromItsFirstUse() throws Exception {
		RedisLockService service = service(1.0 / 3);
		// another instance holds the report lock, so this one's first use of the name "reports" is to wait
		RedisLockService other = this.support.service();
		Lease elsewhere = other.acquire("report:daily", Duration.ofSeconds(20), Duration.ZERO);
		Lease sku = service.acquire(request("sku-4", Duration.ofSeconds(20), Duration.ZERO));
		CompletableFuture<Lease> reporter = CompletableFuture.supplyAsync(() -> service
			.acquire(LockRequest.of("report:daily", Duration.ofSeconds(20), Duration.ofSeconds(30)).withName("reports")));

		await().atMost(DEADLINE).until(() -> this.registry.find(LockServiceMetrics.WAITERS).tag("name", "reports").gauge() != null
				&& gauge(LockServiceMetrics.WAITERS, "reports") == 1);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "reports")).isZero();
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isEqualTo(1);
		assertThat(gauge(LockServiceMetrics.WAITERS, "inventory")).isZero();
		assertThat(this.registry.find(LockMetrics.ACQUIRE).tag("name", "reports").timers()).isEmpty(); // not yet acquired

		elsewhere.release();
		Lease report = reporter.get(10, TimeUnit.SECONDS);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "reports")).isEqualTo(1);
		assertThat(gauge(LockServiceMetrics.WAITERS, "reports")).isZero();

		report.release();
		sku.release();
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "reports")).isZero();
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isZero();
		// one gauge per meter and name, each tagged by the name only
		assertThat(this.registry.find(LockServiceMetrics.LEASES_HELD).gauges())
			.extracting(gauge -> gauge.getId().getTags().toString())
			.containsExactlyInAnyOrder("[tag(name=inventory)]", "[tag(name=reports)]");
		assertThat(this.registry.find(LockServiceMetrics.WAITERS).gauges()).hasSize(2);
	}

	@Test
	void failedRenewalsAndFailedAcquisitionsAreCounted() throws IOException {
		// lease time 20 s renewed every second: an outage of a few seconds fails renewals without losing the lease
		RedisLockService service = service(0.05);
		Lease lease = service.acquire(request("sku-2", Duration.ofSeconds(20), Duration.ZERO));
		this.redis.pause();
		try {
			await().atMost(DEADLINE).until(() -> renewals("failure").count() >= 1);
		}
		finally {
			this.redis.resume();
		}
		await().atMost(DEADLINE).until(() -> renewals("success").count() >= 1);
		lease.release();
		assertThat(lost("renewal-failed").count()).isZero();

		// an acquisition that cannot reach Redis at all
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			closedPort = socket.getLocalPort();
		}
		try (LockTestSupport nowhere = new LockTestSupport(RedisServer.HOST, closedPort)) {
			RedisLockService unreachable = nowhere
				.service(RedisLockService.builder(nowhere.connectionFactory()).listener(new LockMetrics(this.registry)));
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> unreachable.tryAcquire(request("sku-3", Duration.ofSeconds(1), Duration.ZERO)));
		}
		assertThat(acquire("failed").count()).isEqualTo(1);
	}

	/** Fair and read-write locks move the same meters as exclusive ones (issue 15: "every promise of the plain lock"). */
	@Test
	void fairAndReadWriteLocksMoveTheSameMeters() throws Exception {
		RedisLockService service = service(0.05);
		Duration ttl = Duration.ofSeconds(5);
		Lease fair = service.acquire(request("sku-fair", ttl, Duration.ZERO).fair());
		Lease reader = service.acquire(request("sku-rw", ttl, Duration.ZERO).read());
		// a second reader, of another owner, shares the key
		Lease otherReader = CompletableFuture.supplyAsync(() -> service.acquire(request("sku-rw", ttl, Duration.ZERO)
			.withMode(LockMode.READ))).get(10, TimeUnit.SECONDS);
		assertThat(acquire("acquired").count()).isEqualTo(3);
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isEqualTo(3);
		// busy: a second fair caller without a wait, and a writer while the readers hold the key
		assertThat(CompletableFuture.supplyAsync(() -> service.tryAcquire(request("sku-fair", ttl, Duration.ZERO).fair()))
			.get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(CompletableFuture.supplyAsync(() -> service.tryAcquire(request("sku-rw", ttl, Duration.ZERO).write()))
			.get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(acquire("timed-out").count()).isEqualTo(2);
		// the watchdog renews each kind
		long renewed = (long) renewals("success").count();
		await().atMost(DEADLINE).until(() -> renewals("success").count() >= renewed + 3);
		fair.release();
		reader.release();
		otherReader.release();
		assertThat(gauge(LockServiceMetrics.LEASES_HELD, "inventory")).isZero();
		assertThat(releasesGone().count()).isZero();
		assertThat(LockTestSupport.leftKeys(this.redis)).isEmpty();
	}

	private Timer acquire(String outcome) {
		return this.registry.get(LockMetrics.ACQUIRE).tag("name", "inventory").tag("outcome", outcome).timer();
	}

	private Counter renewals(String outcome) {
		return this.registry.get(LockMetrics.RENEWALS).tag("name", "inventory").tag("outcome", outcome).counter();
	}

	private Counter lost(String detection) {
		return this.registry.get(LockMetrics.LOST).tag("name", "inventory").tag("detection", detection).counter();
	}

	private Counter releasesGone() {
		return this.registry.get(LockMetrics.RELEASES_GONE).tag("name", "inventory").counter();
	}

	private double gauge(String meter, String name) {
		Gauge gauge = this.registry.get(meter).tag("name", name).gauge();
		return gauge.value();
	}

}
