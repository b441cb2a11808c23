package dev.distlock.redis;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Whether the watchdog is failing to renew some of the leases a {@link RedisLockService} holds: the last renewal
 * attempt of each counted lease could not reach Redis, and no later one succeeded. A lease that is then lost (its
 * lease time ran out) stops counting: it is reported as a {@link dev.distlock.core.LockLostEvent} instead.
 *
 * @param failingLeases how many held leases have a failed last renewal attempt
 * @param failingSince when the earliest of those started failing, or {@code null} when none is
 * @param lastError the last renewal error seen on one of them, or {@code null} when none is failing
 * @since 0.1.0
 */
public record RenewalStatus(int failingLeases, @Nullable Instant failingSince, @Nullable String lastError) {

	/** No held lease is failing to renew. */
	public static final RenewalStatus HEALTHY = new RenewalStatus(0, null, null);

	/** {@return whether renewals of at least one held lease are failing} */
	public boolean isFailing() {
		return this.failingLeases > 0;
	}

}
