package dev.distlock.core;

import java.util.List;

import org.springframework.util.Assert;

/**
 * What {@link LockForceReleaser#forceRelease(String)} removed: the holder(s) of the lease at that moment, so that an
 * operator's intervention can be audited. An exclusive, fair or write lock has one holder; a read lock has as many as
 * it had readers, which share one fencing token.
 *
 * @param key the lock key
 * @param owner the owner id that held it (its client id names the instance): the writer of a write lock, one of the
 * readers of a read lock (the first of {@code owners})
 * @param holdCount how many holds were open, over all holders
 * @param fencingToken the removed lease's fencing token; the next holder gets a greater one
 * @param owners every owner id that held it, {@code owner} first: one for an exclusive or fair lock, the writer and a
 * reader it downgraded to for a write lock, each reader for a read lock
 * @param holders the {@linkplain HolderLabel labels} the store kept of those owners, in the order of {@code owners}
 * (an owner stored without one is left out, so it may be shorter, or empty): who held it, for the log line and the
 * audit record of the release. Text the holders' processes wrote: escape it ({@link LogSafe}) before logging it, as
 * {@link #toString()} does
 * @since 0.1.0 (in {@code dev.distlock.redis} until 0.2.0)
 */
public record ForcedRelease(String key, String owner, long holdCount, long fencingToken, List<String> owners,
		List<String> holders) {

	/**
	 * A release as the store reported it.
	 * @param key the lock key
	 * @param owner the holder named first
	 * @param holdCount the holds that were open
	 * @param fencingToken the lease's fencing token
	 * @param owners every holder, {@code owner} first
	 * @param holders the labels of the holders that had one, in the order of {@code owners}
	 * @since 0.9.0
	 */
	public ForcedRelease {
		Assert.notNull(owners, "'owners' must not be null");
		Assert.notNull(holders, "'holders' must not be null");
		owners = List.copyOf(owners);
		holders = List.copyOf(holders);
		Assert.isTrue(!owners.isEmpty() && owners.get(0).equals(owner), "'owners' must start with 'owner'");
	}

	/**
	 * A release as a store that keeps no holder labels reports it.
	 * @param key the lock key
	 * @param owner the holder named first
	 * @param holdCount the holds that were open
	 * @param fencingToken the lease's fencing token
	 * @param owners every holder, {@code owner} first
	 */
	public ForcedRelease(String key, String owner, long holdCount, long fencingToken, List<String> owners) {
		this(key, owner, holdCount, fencingToken, owners, List.of());
	}

	/**
	 * The release of a lease with one holder.
	 * @param key the lock key
	 * @param owner the owner id that held it
	 * @param holdCount how many holds it had open
	 * @param fencingToken the lease's fencing token
	 */
	public ForcedRelease(String key, String owner, long holdCount, long fencingToken) {
		this(key, owner, holdCount, fencingToken, List.of(owner), List.of());
	}

	/**
	 * The release without its owner ids, which the store kept and which carry their instances' client ids: what a log
	 * line may show of it. The holders by their labels, escaped.
	 */
	@Override
	public String toString() {
		return "ForcedRelease[key=" + LogSafe.escape(this.key) + ", holders=" + this.owners.size() + ", holdCount="
				+ this.holdCount + ", fencingToken=" + this.fencingToken + ", labels="
				+ this.holders.stream().map(LogSafe::escape).toList() + "]";
	}

}
