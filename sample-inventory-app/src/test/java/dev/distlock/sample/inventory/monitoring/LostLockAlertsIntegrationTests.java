package dev.distlock.sample.inventory.monitoring;

import java.time.Duration;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockLostException;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
import dev.distlock.observability.LockMetrics;
import dev.distlock.test.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/** A lease deleted from Redis while the app holds it is logged (with its owner) and counted by the sample. */
@SpringBootTest
@ExtendWith(OutputCaptureExtension.class)
class LostLockAlertsIntegrationTests {

	@Autowired
	LockService locks;

	@Autowired
	MeterRegistry meters;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> RedisServer.shared().host());
		registry.add("spring.data.redis.port", () -> RedisServer.shared().port());
	}

	@Test
	void aLostLeaseIsLoggedWithItsHolderAndCountedByDetection(CapturedOutput output) {
		// renewed every 2 s: the first renewal finds the key gone (on a machine too loaded to renew within the lease
		// time, the watchdog gives the lease up by its clock instead; either way it is lost, logged and counted)
		Lease lease = this.locks.acquire(LockRequest.of("inventory:lost-sku", Duration.ofSeconds(6), Duration.ZERO)
			.withName("inventory"));
		RedisServer.shared().execute("DEL", "lock:{inventory:lost-sku}");

		await().atMost(Duration.ofSeconds(20)).until(lease::isLost);
		LockLostException released = catchThrowableOfType(LockLostException.class, lease::release);
		assertThat(released).isNotNull();
		LockLostEvent.Detection detection = released.getDetection();
		assertThat(detection).isIn(LockLostEvent.Detection.RENEWAL_FOUND_GONE, LockLostEvent.Detection.RENEWAL_FAILED);
		// the event reaches the application on the starter's events thread
		await().atMost(Duration.ofSeconds(10)).until(() -> lost(LockMetrics.detectionTag(detection)) == 1.0);
		await().atMost(Duration.ofSeconds(10)).until(() -> output.getOut().contains("Lost lock 'inventory:lost-sku'"));
		assertThat(output.getOut()).contains("Lost lock 'inventory:lost-sku' (inventory) held by " + lease.holder()
				+ " with fencing token " + lease.fencingToken() + ": " + detection.description());
		assertThat(output.getOut()).doesNotContain(lease.owner());
		// tagged like the starter's distlock.leases.lost: renewal-found-gone, not RENEWAL_FOUND_GONE
		assertThat(LockMetrics.detectionTag(detection)).isIn("renewal-found-gone", "renewal-failed");
		assertThat(this.meters.find(LostLockAlerts.COUNTER).tag("detection", detection.name()).counter()).isNull();
	}

	private double lost(String detection) {
		var counter = this.meters.find(LostLockAlerts.COUNTER).tag("name", "inventory").tag("detection", detection).counter();
		return (counter != null) ? counter.count() : 0;
	}

}
