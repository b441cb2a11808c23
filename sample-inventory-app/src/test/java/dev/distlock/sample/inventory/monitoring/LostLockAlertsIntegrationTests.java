package dev.distlock.sample.inventory.monitoring;

import java.time.Duration;

import dev.distlock.core.Lease;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockRequest;
import dev.distlock.core.LockService;
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
import static org.awaitility.Awaitility.await;

/** A lease deleted from Redis while the app holds it is logged and counted by the sample. */
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
	void aLostLeaseIsLoggedAndCounted(CapturedOutput output) {
		Lease lease = this.locks.acquire(LockRequest.of("inventory:lost-sku", Duration.ofSeconds(3), Duration.ZERO)
			.withName("inventory"));
		RedisServer.shared().execute("DEL", "lock:{inventory:lost-sku}");

		await().atMost(Duration.ofSeconds(10)).until(() -> lost("RENEWAL_FOUND_GONE") == 1.0);
		await().atMost(Duration.ofSeconds(5)).until(() -> output.getOut().contains("Lost lock 'inventory:lost-sku'"));
		assertThat(output.getOut()).contains("fencing token " + lease.fencingToken())
			.contains(LockLostEvent.Detection.RENEWAL_FOUND_GONE.description());
		assertThat(lease.isLost()).isTrue();
	}

	private double lost(String detection) {
		var counter = this.meters.find(LostLockAlerts.COUNTER).tag("name", "inventory").tag("detection", detection).counter();
		return (counter != null) ? counter.count() : 0;
	}

}
