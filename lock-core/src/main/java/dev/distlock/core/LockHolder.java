package dev.distlock.core;

import java.time.Duration;

import org.springframework.util.Assert;

/**
 * What the store says about a held key, as {@link LockService#holder(String)} reads it in one round trip: no owner id,
 * so it shows no more than the {@code locks} endpoint shows to anyone.
 *
 * @param key the key as the caller gave it
 * @param holds how many holds the holder has open on the key (re-entries count), at least 1
 * @param remainingTtl how long the store keeps the lease unless it is renewed, extended or released
 * @param fencingToken the current lease's fencing token
 * @since 0.1.0
 */
public record LockHolder(String key, int holds, Duration remainingTtl, long fencingToken) {

	/**
	 * A holder as the store described it.
	 * @param key the key as the caller gave it
	 * @param holds the open holds, at least 1
	 * @param remainingTtl the lease's remaining time, not negative
	 * @param fencingToken the lease's fencing token
	 */
	public LockHolder {
		Assert.hasText(key, "'key' must not be blank");
		Assert.isTrue(holds >= 1, "'holds' must be at least 1");
		Assert.isTrue(remainingTtl != null && !remainingTtl.isNegative(), "'remainingTtl' must not be negative");
	}

}
