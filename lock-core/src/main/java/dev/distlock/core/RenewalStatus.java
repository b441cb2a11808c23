package dev.distlock.core;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Whether an engine is failing to renew some of the leases it holds ({@link LockOperatorView#renewalStatus()}): the
 * last renewal attempt of each counted lease could not reach the store, and no later one succeeded. A lease that is
 * then lost (its lease time ran out) stops counting: it is reported as a {@link LockLostEvent} instead.
 *
 * @param failingLeases how many held leases have a failed last renewal attempt
 * @param failingSince when the earliest of those started failing, or {@code null} when none is
 * @param lastError the last renewal error seen on one of them, or {@code null} when none is failing
 * @since 0.1.0 (in {@code dev.distlock.redis} until 0.2.0)
 */
public record RenewalStatus(int failingLeases, @Nullable Instant failingSince, @Nullable String lastError) {

	/** No held lease is failing to renew. */
	public static final RenewalStatus HEALTHY = new RenewalStatus(0, null, null);

	/** {@return whether renewals of at least one held lease are failing} */
	public boolean isFailing() {
		return this.failingLeases > 0;
	}

}
