package dev.distlock.testing.tck;

import java.time.Duration;
import java.time.Instant;

import dev.distlock.core.LockService;
import dev.distlock.testing.InMemoryLockService;
import dev.distlock.testing.InMemoryLockServiceBuilder;
import dev.distlock.testing.InMemoryLockStore;
import dev.distlock.testing.LockClock;
import dev.distlock.testing.ManualLockClock;

/** The engine contract against the in-memory engine on a clock the test moves: exact expiries and deadlines. */
class InMemoryManualClockTckTests extends LockServiceTck {

	private final ManualLockClock clock = LockClock.manual();

	private final InMemoryLockStore store = new InMemoryLockStore(this.clock);

	@Override
	protected LockService newInstance(Options options) {
		InMemoryLockServiceBuilder builder = InMemoryLockService.builder(this.store)
			.eventPublisher(options.eventPublisher());
		options.listeners().forEach(builder::listener);
		return builder.build();
	}

	@Override
	protected void passTime(Duration time) {
		this.clock.advance(time);
	}

	@Override
	protected Instant now() {
		return this.clock.now();
	}

	@Override
	protected boolean timeIsControlled() {
		return true;
	}

}
