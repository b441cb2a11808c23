package dev.distlock.core;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A point-in-time view of one lease this process holds, for diagnostics (the actuator endpoint lists these).
 *
 * @param key the lock key
 * @param name the lock's name
 * @param owner the owner id in the store
 * @param ownerThread the name of the thread that acquired it, or of its {@link LockOwner} when that is not a thread
 * @param heldSince when it was acquired
 * @param holdCount how many holds (re-entries) are open
 * @param ttl the lease time
 * @param ttlRemaining the remaining lease time as this process last confirmed it (zero when past or lost)
 * @param lastRenewal when the watchdog last renewed it, or {@code null} if never
 * @param fencingToken the fencing token
 * @param autoRenewed whether the watchdog renews it
 * @param lost whether it was found lost (its holder has not released it yet)
 * @param mode how the lock admits holders: exclusive, fair, read or write
 * @since 0.1.0
 */
public record LeaseSnapshot(String key, String name, String owner, String ownerThread, Instant heldSince, int holdCount,
		Duration ttl, Duration ttlRemaining, @Nullable Instant lastRenewal, long fencingToken, boolean autoRenewed,
		boolean lost, LockMode mode) {

	/**
	 * A snapshot of an exclusive lease (the form before lock modes existed).
	 * @param key the lock key
	 * @param name the lock's name
	 * @param owner the owner id in the store
	 * @param ownerThread the name of the thread that acquired it, or of its {@link LockOwner}
	 * @param heldSince when it was acquired
	 * @param holdCount how many holds are open
	 * @param ttl the lease time
	 * @param ttlRemaining the remaining lease time as this process last confirmed it
	 * @param lastRenewal when the watchdog last renewed it, or {@code null} if never
	 * @param fencingToken the fencing token
	 * @param autoRenewed whether the watchdog renews it
	 * @param lost whether it was found lost
	 */
	public LeaseSnapshot(String key, String name, String owner, String ownerThread, Instant heldSince, int holdCount,
			Duration ttl, Duration ttlRemaining, @Nullable Instant lastRenewal, long fencingToken, boolean autoRenewed,
			boolean lost) {
		this(key, name, owner, ownerThread, heldSince, holdCount, ttl, ttlRemaining, lastRenewal, fencingToken,
				autoRenewed, lost, LockMode.EXCLUSIVE);
	}

	/**
	 * The snapshot without its owner id, which a release presents to the store: what a log line may show of it.
	 */
	@Override
	public String toString() {
		return "LeaseSnapshot[key=" + LogSafe.escape(this.key) + ", name=" + LogSafe.escape(this.name)
				+ ", ownerThread=" + LogSafe.escape(this.ownerThread) + ", heldSince=" + this.heldSince + ", holdCount="
				+ this.holdCount + ", ttl=" + this.ttl + ", ttlRemaining=" + this.ttlRemaining + ", lastRenewal="
				+ this.lastRenewal + ", fencingToken=" + this.fencingToken + ", autoRenewed=" + this.autoRenewed
				+ ", lost=" + this.lost + ", mode=" + this.mode + "]";
	}

}
