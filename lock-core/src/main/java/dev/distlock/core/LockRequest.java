package dev.distlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * What to lock and how: the key, the lease time, how long to wait for it, whether the watchdog keeps the lease alive
 * while it is held, and a name that groups the key's metrics (keys are unbounded, names are not).
 *
 * @param key the lock key, unique among the keys of one service's prefix; never blank
 * @param ttl the lease time; with {@code autoRenew} the watchdog resets the lease to it while it is held; at least 1ms,
 * at most {@link LockSettings#MAX_TTL} (365 days)
 * @param waitTime how long to wait for a held key; zero tries once; never negative
 * @param autoRenew whether the watchdog renews the lease until it is released (otherwise it expires at {@code ttl})
 * @param name the name used to group this lock in metrics and logs, or {@code null} for {@link #DEFAULT_NAME}
 * @param mode how the lock admits holders: exclusive (the default), fair, read or write
 * @param maxHold the longest time the lease is held, a cap on runaway holders, or {@code null} for none: counted from
 * the acquisition of the lease (its re-entries do not restart it), the watchdog stops renewing the lease once it has
 * been held that long, and the lease is then lost ({@link LockLostEvent.Detection#MAX_HOLD_EXCEEDED}: the event, the
 * listeners, the {@link Lease#onLost} actions, {@link LockLostException} at release). What the store still has of it
 * lapses at its lease time, or goes with the holder's release; the holder must not rely on it from the moment of the
 * loss. A re-entry's {@code maxHold} is ignored: the first acquisition's cap rules the lease. At least {@code ttl}, at
 * most {@link LockSettings#MAX_TTL}; it matters only for renewed leases, since a fixed lease ends at its lease time
 * @param permits how many holders a {@link LockMode#PERMITS} request admits at once across every process, from 1 to
 * {@link LockSettings#MAX_PERMITS}; 1 for every other mode (set by {@link #permits(int)})
 * @since 0.1.0
 */
public record LockRequest(String key, Duration ttl, Duration waitTime, boolean autoRenew, @Nullable String name,
		LockMode mode, @Nullable Duration maxHold, int permits) {

	/** The name of locks that were not given one. */
	public static final String DEFAULT_NAME = "default";

	/**
	 * Checks the arguments.
	 * @param key the lock key; not blank
	 * @param ttl the lease time; at least 1ms, at most {@link LockSettings#MAX_TTL}
	 * @param waitTime the longest time to wait for the key; zero tries once, never negative
	 * @param autoRenew whether the watchdog renews the lease while it is held
	 * @param name the name used to group this lock in metrics and logs, or {@code null} for {@link #DEFAULT_NAME}
	 * @param mode how the lock admits holders
	 * @param maxHold the longest hold of the lease, or {@code null} for none; at least {@code ttl}, at most
	 * {@link LockSettings#MAX_TTL}
	 * @param permits how many holders a {@link LockMode#PERMITS} request admits at once; 1 for the other modes
	 * @throws IllegalArgumentException naming the argument that is out of range
	 */
	public LockRequest {
		LockSettings.checkKey(key, "'key'");
		LockSettings.checkTtl(ttl, "'ttl' of lock '" + LogSafe.escape(key) + "'");
		LockSettings.checkWaitTime(waitTime, "'waitTime' of lock '" + LogSafe.escape(key) + "'");
		LockSettings.checkName(name, "'name' of lock '" + LogSafe.escape(key) + "'");
		if (mode == null) {
			throw new IllegalArgumentException("'mode' of lock '" + LogSafe.escape(key) + "' must not be null");
		}
		if (maxHold != null) {
			LockSettings.checkMaxHold(maxHold, ttl, "'maxHold' of lock '" + LogSafe.escape(key) + "'");
		}
		LockSettings.checkPermits(permits, mode, "'permits' of lock '" + LogSafe.escape(key) + "'");
	}

	/**
	 * A request of one permit (the form before permits existed): every mode but {@link LockMode#PERMITS} admits one
	 * holder, and a {@code PERMITS} request made this way is a semaphore of one permit.
	 * @param key the lock key; not blank
	 * @param ttl the lease time; at least 1ms, at most {@link LockSettings#MAX_TTL}
	 * @param waitTime the longest time to wait for the key; zero tries once, never negative
	 * @param autoRenew whether the watchdog renews the lease while it is held
	 * @param name the name used to group this lock in metrics and logs, or {@code null} for {@link #DEFAULT_NAME}
	 * @param mode how the lock admits holders
	 * @param maxHold the longest hold of the lease, or {@code null} for none
	 */
	public LockRequest(String key, Duration ttl, Duration waitTime, boolean autoRenew, @Nullable String name,
			LockMode mode, @Nullable Duration maxHold) {
		this(key, ttl, waitTime, autoRenew, name, mode, maxHold, 1);
	}

	/**
	 * A request without a longest hold (the form before {@code maxHold} existed).
	 * @param key the lock key; not blank
	 * @param ttl the lease time; at least 1ms, at most {@link LockSettings#MAX_TTL}
	 * @param waitTime the longest time to wait for the key; zero tries once, never negative
	 * @param autoRenew whether the watchdog renews the lease while it is held
	 * @param name the name used to group this lock in metrics and logs, or {@code null} for {@link #DEFAULT_NAME}
	 * @param mode how the lock admits holders
	 */
	public LockRequest(String key, Duration ttl, Duration waitTime, boolean autoRenew, @Nullable String name,
			LockMode mode) {
		this(key, ttl, waitTime, autoRenew, name, mode, null);
	}

	/**
	 * An exclusive lock request (the form before lock modes existed).
	 * @param key the lock key; not blank
	 * @param ttl the lease time; at least 1ms
	 * @param waitTime the longest time to wait for the key; zero tries once, never negative
	 * @param autoRenew whether the watchdog renews the lease while it is held
	 * @param name the name used to group this lock in metrics and logs, or {@code null} for {@link #DEFAULT_NAME}
	 */
	public LockRequest(String key, Duration ttl, Duration waitTime, boolean autoRenew, @Nullable String name) {
		this(key, ttl, waitTime, autoRenew, name, LockMode.EXCLUSIVE);
	}

	/**
	 * A request for a lease that the watchdog renews while it is held.
	 * @param key the lock key
	 * @param ttl the lease time
	 * @param wait the longest time to wait for the key
	 * @return the request
	 */
	public static LockRequest of(String key, Duration ttl, Duration wait) {
		return new LockRequest(key, ttl, wait, true, null);
	}

	/**
	 * {@return this request with a lease that is never renewed: it expires {@code ttl} after the acquisition at the
	 * latest}
	 */
	public LockRequest withFixedLease() {
		return new LockRequest(this.key, this.ttl, this.waitTime, false, this.name, this.mode, this.maxHold, this.permits);
	}

	/**
	 * {@return this request with the given metrics name}
	 * @param name the name used to group this lock in metrics and logs
	 */
	public LockRequest withName(String name) {
		return new LockRequest(this.key, this.ttl, this.waitTime, this.autoRenew, name, this.mode, this.maxHold, this.permits);
	}

	/**
	 * {@return this request with the given mode}
	 * @param mode how the lock admits holders
	 */
	public LockRequest withMode(LockMode mode) {
		int permits = (mode == LockMode.PERMITS) ? this.permits : 1;
		return new LockRequest(this.key, this.ttl, this.waitTime, this.autoRenew, this.name, mode, this.maxHold,
				permits);
	}

	/**
	 * {@return this request with a longest hold: the watchdog stops renewing the lease once it has been held that long,
	 * and the lease is lost then ({@link LockLostEvent.Detection#MAX_HOLD_EXCEEDED}; see {@link #maxHold()})}
	 * @param maxHold the longest hold, or {@code null} for none; at least the lease time, at most
	 * {@link LockSettings#MAX_TTL}
	 * @throws IllegalArgumentException naming the key when {@code maxHold} is shorter than the lease time or out of range
	 * @since 0.7.0
	 */
	public LockRequest withMaxHold(@Nullable Duration maxHold) {
		return new LockRequest(this.key, this.ttl, this.waitTime, this.autoRenew, this.name, this.mode, maxHold, this.permits);
	}

	/** {@return this request as a fair lock: waiters of every process get it in the order they queued} */
	public LockRequest fair() {
		return withMode(LockMode.FAIR);
	}

	/** {@return this request for the read lock of the key: shared with other readers, excluding writers} */
	public LockRequest read() {
		return withMode(LockMode.READ);
	}

	/** {@return this request for the write lock of the key: one writer, no readers} */
	public LockRequest write() {
		return withMode(LockMode.WRITE);
	}

	/**
	 * {@return this request for one of {@code permits} permits of the key: a {@link LockMode#PERMITS} request, which up
	 * to {@code permits} holders of every process hold at once}
	 * @param permits how many holders the key admits at once, from 1 to {@link LockSettings#MAX_PERMITS}
	 * @throws IllegalArgumentException naming the key when {@code permits} is out of range, or when this request is
	 * for a fair, read or write lock (permits are a kind of their own, never combined with another)
	 * @since 0.8.0
	 */
	public LockRequest permits(int permits) {
		if (this.mode != LockMode.EXCLUSIVE && this.mode != LockMode.PERMITS) {
			throw new IllegalArgumentException("Lock '" + LogSafe.escape(this.key) + "': permits cannot be combined "
					+ "with a " + this.mode.name().toLowerCase(java.util.Locale.ROOT) + " lock");
		}
		return new LockRequest(this.key, this.ttl, this.waitTime, this.autoRenew, this.name, LockMode.PERMITS,
				this.maxHold, permits);
	}

	/** {@return whether this request is for a fair lock} */
	public boolean isFair() {
		return this.mode == LockMode.FAIR;
	}

	/** {@return the name, or {@link #DEFAULT_NAME} when none was given} */
	public String effectiveName() {
		return (this.name != null) ? this.name : DEFAULT_NAME;
	}

}
