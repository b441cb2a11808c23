package dev.distlock.testing.autoconfigure;

import dev.distlock.actuate.LocksHealthIndicator;
import dev.distlock.core.LockOperatorView;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * The starter's {@code locks} health on the in-memory engine, with {@code engine: in-memory (single instance only)}
 * among its details, so that whoever looks at the health of an application run this way sees that its locks do not
 * exclude other instances.
 */
class InMemoryLocksHealthIndicator extends LocksHealthIndicator {

	InMemoryLocksHealthIndicator(LockOperatorView operatorView, Status renewalFailureStatus) {
		super(operatorView, renewalFailureStatus);
	}

	@Override
	public Health health() {
		Health health = super.health();
		return Health.status(health.getStatus())
			.withDetail("engine", InMemoryLocksConfiguration.ENGINE)
			.withDetails(health.getDetails())
			.build();
	}

}
