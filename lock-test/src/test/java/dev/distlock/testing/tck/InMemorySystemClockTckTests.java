package dev.distlock.testing.tck;

import java.time.Duration;

import dev.distlock.core.LockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.InMemoryLockServiceBuilder;
import dev.distlock.testing.InMemoryLockStore;

/** The engine contract against the in-memory engine on the system clock, where time passes as it does for Redis. */
class InMemorySystemClockTckTests extends LockServiceTck {

	private final InMemoryLockStore store = new InMemoryLockStore();

	@Override
	protected LockService newInstance(Options options) {
		InMemoryLockServiceBuilder builder = InMemoryLockService.builder(this.store)
			.eventPublisher(options.eventPublisher());
		options.listeners().forEach(builder::listener);
		return builder.build();
	}

	/** Renewals never lag here (a late catch-up renews as of when they were due), so a short lease time is safe. */
	@Override
	protected Duration shortTtl() {
		return Duration.ofSeconds(1);
	}

}
