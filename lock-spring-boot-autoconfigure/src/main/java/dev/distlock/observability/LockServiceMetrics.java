package dev.distlock.observability;

import dev.distlock.redis.RedisLockService;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.util.Assert;

/**
 * Gauges of what a {@link RedisLockService} is doing right now: the leases it holds and the threads waiting for a
 * lock held elsewhere. Read when the registry is scraped, at the cost of a map size and a walk over the subscribed
 * release channels.
 *
 * @since 0.1.0
 */
public class LockServiceMetrics implements MeterBinder {

	/** Gauge: leases this instance holds now. */
	public static final String LEASES_HELD = "distlock.leases.held";

	/** Gauge: threads of this instance waiting for a lock held elsewhere. */
	public static final String WAITERS = "distlock.waiters";

	private final RedisLockService lockService;

	public LockServiceMetrics(RedisLockService lockService) {
		Assert.notNull(lockService, "'lockService' must not be null");
		this.lockService = lockService;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder(LEASES_HELD, this.lockService, RedisLockService::activeLeaseCount)
			.description("Leases this instance holds now")
			.register(registry);
		Gauge.builder(WAITERS, this.lockService, RedisLockService::waitingThreads)
			.description("Threads of this instance waiting for a lock held elsewhere")
			.register(registry);
	}

}
