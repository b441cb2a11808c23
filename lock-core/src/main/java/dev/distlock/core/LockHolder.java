package dev.distlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.util.Assert;

/**
 * What the store says about a held key, as {@link LockService#holder(String)} reads it in one round trip: no owner id,
 * so it shows no more than the {@code locks} endpoint shows to anyone.
 *
 * @param key the key as the caller gave it
 * @param holds how many holds the holder has open on the key (re-entries count), at least 1
 * @param remainingTtl how long the store keeps the lease unless it is renewed, extended or released
 * @param fencingToken the current lease's fencing token
 * @param holder who holds it, in words an operator can act on: the {@linkplain HolderLabel holder label} its
 * acquisition stored with the lease ({@code <application>@<instance> <owner>}, one line); for a read lock with several
 * readers their labels joined by {@code "; "}, in the order of their text (a write lock's writer first, then a reader
 * it downgraded to), at most five and then {@code "and <n> more"}. {@code null} when the store has no label (an engine
 * or a version that stores none). Text another process wrote: escape it ({@link LogSafe}) before logging it.
 * @since 0.1.0
 */
public record LockHolder(String key, int holds, Duration remainingTtl, long fencingToken, @Nullable String holder) {

	/**
	 * A holder as the store described it.
	 * @param key the key as the caller gave it
	 * @param holds the open holds, at least 1
	 * @param remainingTtl the lease's remaining time, not negative
	 * @param fencingToken the lease's fencing token
	 * @param holder the holder's label(s), or {@code null}
	 * @since 0.9.0
	 */
	public LockHolder {
		Assert.hasText(key, "'key' must not be blank");
		Assert.isTrue(holds >= 1, "'holds' must be at least 1");
		Assert.isTrue(remainingTtl != null && !remainingTtl.isNegative(), "'remainingTtl' must not be negative");
	}

	/**
	 * A holder as a store that keeps no label describes it (the form before labels were stored).
	 * @param key the key as the caller gave it
	 * @param holds the open holds, at least 1
	 * @param remainingTtl the lease's remaining time, not negative
	 * @param fencingToken the lease's fencing token
	 */
	public LockHolder(String key, int holds, Duration remainingTtl, long fencingToken) {
		this(key, holds, remainingTtl, fencingToken, null);
	}

}
