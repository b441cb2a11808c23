package dev.distlock.sample.inventory.monitoring;

import dev.distlock.core.LockLostEvent;
import dev.distlock.observability.LockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Logs and counts every lease the instance loses while holding it. A lost lease means a purchase may have run
 * without exclusive access: the fencing token on its write keeps the stock right, and this tells the operator it
 * happened (the counter {@value #COUNTER} is what an alert would watch).
 */
@Component
public class LostLockAlerts {

	/**
	 * Lost leases, tagged with the lock's name and how the loss was detected, in the starter's tag form
	 * ({@code renewal-found-gone}, as on {@code distlock.leases.lost}).
	 */
	public static final String COUNTER = "inventory.locks.lost";

	private static final Logger logger = LoggerFactory.getLogger(LostLockAlerts.class);

	private final MeterRegistry meters;

	public LostLockAlerts(MeterRegistry meters) {
		this.meters = meters;
	}

	@EventListener
	public void onLockLost(LockLostEvent event) {
		// the holder's label (application@instance and thread or method), never event.owner(): an owner id is what a
		// release presents to Redis, and it does not belong in a log
		logger.error("Lost lock '{}' ({}) held by {} with fencing token {}: {}", event.key(), event.name(),
				event.holder(), event.fencingToken(), event.detection().description());
		this.meters.counter(COUNTER, "name", event.name(), "detection", LockMetrics.detectionTag(event.detection()))
			.increment();
	}

}
