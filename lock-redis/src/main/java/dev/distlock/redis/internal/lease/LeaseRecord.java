package dev.distlock.redis.internal.lease;

import java.time.Duration;
import java.time.Instant;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LogSafe;
import dev.distlock.redis.internal.redlock.RedlockEntry;
import dev.distlock.redis.internal.single.LeaseEntry;

import org.jspecify.annotations.Nullable;

/**
 * What this process knows about one lease it holds, on either engine: the record base of {@link LeaseEntry}
 * (single node) and {@link RedlockEntry} (a quorum of nodes). It keeps what both engines mean the same way: who holds
 * the lease, its holds and re-entries on their way, its state, until when it is valid, its longest hold, how its
 * renewals fare, its loss, and its operator snapshot. The subclasses add only what their engine does differently: the
 * renewal schedule of a single node, the per-node tokens of Redlock.
 * <p>
 * Invariants (all mutable state is guarded by {@code this}):
 * <ul>
 * <li>{@code state} only moves forward: HELD to RELEASED, LOST or EXPIRED (a single-node fixed lease), never back. A
 * LOST record keeps its {@link #lostEvent()} for the holder's release.</li>
 * <li>{@code validUntilNanos} never overstates the lease: it is always the send time of a call that the store (or a
 * quorum of nodes) confirmed plus the lease time that call set (less the clock drift allowance on Redlock).</li>
 * <li>{@code maxHoldNanos}, set once before the record is registered with the watchdog, caps how long a renewed lease
 * is kept, from {@code acquiredAtNanos}; re-entries do not move the cap (the first acquisition's rules).</li>
 * </ul>
 * {@code state} is also volatile, so that the gauges and the health check can tell held from lost leases at scrape time
 * without taking the lock the holder's thread uses.
 */
public abstract class LeaseRecord {

	public enum State {
		HELD, RELEASED, LOST, EXPIRED
	}

	public final String key;

	public final String redisKey;

	public final String channel;

	public final String owner;

	public final String name;

	/** The fencing token handed to the holder (on Redlock: the greatest its granting nodes issued). */
	public final long token;

	/** For operators: the name of the thread that acquired the lease, or the owner's when it is not a thread. */
	final String ownerThread;

	/**
	 * Whose lease this is for re-entry ({@link LockOwner#current()} at acquisition, or the owner an asynchronous
	 * acquisition named): its re-entries find the lease by it, whichever thread they run on.
	 */
	final LockOwner lockOwner;

	/**
	 * Who holds it, for log lines, messages and {@link dev.distlock.core.Lease#holder()}: what they name the holder
	 * by, never {@link #owner}, which a release presents to Redis.
	 */
	final HolderLabel holder;

	final Instant acquiredAt;

	public final long acquiredAtNanos;

	/** The {@link dev.distlock.core.Lease#onLost} actions of its holds. */
	final LostActions lostActions = new LostActions();

	public volatile State state = State.HELD;

	public int holds = 1;

	/** Re-entries sent and not answered yet. */
	private final PendingReentries reentries = new PendingReentries();

	public long ttlMillis;

	public boolean autoRenew;

	public long validUntilNanos;

	/** The longest hold of a renewed lease, from {@code acquiredAtNanos}; 0 for none. */
	public long maxHoldNanos;

	private @Nullable Instant lastRenewal;

	public @Nullable LockLostEvent lostEvent;

	/** When the renewals of this lease started failing (the first failure since the last success), or null. */
	private @Nullable Instant renewalFailingSince;

	private @Nullable String lastRenewalError;

	public LeaseRecord(String key, String redisKey, String channel, String owner, String name, long token,
			LockOwner lockOwner, HolderLabel holder, long acquiredAtNanos, long ttlMillis, boolean autoRenew,
			long validUntilNanos) {
		this.key = key;
		this.redisKey = redisKey;
		this.channel = channel;
		this.owner = owner;
		this.name = name;
		this.token = token;
		this.lockOwner = lockOwner;
		this.holder = holder;
		// an owner that is not a thread is named by itself: the engine thread that completes its acquisition says nothing
		this.ownerThread = lockOwner.isThread() ? Thread.currentThread().getName() : lockOwner.toString();
		this.acquiredAt = Instant.now();
		this.acquiredAtNanos = acquiredAtNanos;
		this.ttlMillis = ttlMillis;
		this.autoRenew = autoRenew;
		this.validUntilNanos = validUntilNanos;
	}

	/** {@return how the lock admits holders, for the operator's snapshot} */
	public abstract LockMode lockMode();

	/**
	 * Count one more hold, that of {@code reentry}, which the store (or a quorum) counted and keeps until
	 * {@code validUntilNanos} at least. Returns false when the record is no longer HELD (the caller then starts a new
	 * one). A re-entry with a longer lease time or with renewal widens the record: it never shortens a lease.
	 */
	public final synchronized boolean reenterUntil(long ttlMillis, boolean autoRenew, long validUntilNanos,
			PendingReentries.Reentry reentry) {
		if (this.state != State.HELD) {
			this.reentries.answered(reentry);
			return false;
		}
		this.reentries.counted(reentry); // with the hold, in one step (see PendingReentries)
		this.holds++;
		this.ttlMillis = Math.max(this.ttlMillis, ttlMillis);
		this.autoRenew |= autoRenew;
		this.validUntilNanos = later(this.validUntilNanos, validUntilNanos);
		return true;
	}

	/**
	 * {@return one more re-entry on its way, with the hold count it is to reach in Redis} (see
	 * {@link PendingReentries}); a re-entry counts it, else pair it with {@link #reentryAnswered}.
	 */
	public final synchronized PendingReentries.Reentry reentryTarget() {
		return this.reentries.reserve(this.holds);
	}

	/** The re-entry was answered without a hold counted, or given up; nothing when a re-entry counted it. */
	public final synchronized void reentryAnswered(PendingReentries.Reentry reentry) {
		this.reentries.answered(reentry);
	}

	/** {@return the holds Redis counts at least while a release is sent} (see {@link PendingReentries}). */
	public final synchronized long holdsBeforeRelease() {
		return this.reentries.holdsBeforeRelease(this.holds);
	}

	public final synchronized State state() {
		return this.state;
	}

	/** Whether the lease was found lost; a lock-free read for diagnostics (see the class comment). */
	public final boolean isLost() {
		return this.state == State.LOST;
	}

	final synchronized boolean isHeld(long nowNanos) {
		return this.state == State.HELD && nowNanos - this.validUntilNanos < 0;
	}

	public final synchronized boolean isAutoRenew() {
		return this.autoRenew;
	}

	/** The holds (re-entries) this process has open on the lease. */
	public final synchronized int holds() {
		return this.holds;
	}

	public final synchronized long ttlMillis() {
		return this.ttlMillis;
	}

	/** The moment ({@link System#nanoTime()}) until which the lease is kept at least; see the class comment. */
	public final synchronized long validUntilNanos() {
		return this.validUntilNanos;
	}

	public final synchronized @Nullable LockLostEvent lostEvent() {
		return this.lostEvent;
	}

	/** Mark the lease lost unless it already ended; returns the event to publish, or null if it already ended. */
	public final synchronized @Nullable LockLostEvent markLost(LockLostEvent.Detection detection) {
		if (this.state != State.HELD) {
			return null;
		}
		return lost(detection);
	}

	/** Record the loss, whatever the state; the caller holds {@code this}. */
	public final LockLostEvent lost(LockLostEvent.Detection detection) {
		this.state = State.LOST;
		this.lostEvent = new LockLostEvent(this.key, this.name, this.owner, this.token, detection, Instant.now(),
				this.holder);
		return this.lostEvent;
	}

	/**
	 * Cap the hold of this lease at {@code maxHold} from its acquisition (see the class comment); called once, before
	 * the record is registered with the watchdog. Nothing for null.
	 */
	public final synchronized void capHold(@Nullable Duration maxHold) {
		if (maxHold != null) {
			this.maxHoldNanos = Math.max(1, maxHold.toNanos());
		}
	}

	/**
	 * Whether the watchdog must give up this renewed lease at {@code nowNanos}, because it has been held for its
	 * longest hold. A fixed lease is never given up for it: it ends at its lease time, which is not beyond the cap.
	 */
	public final synchronized boolean isMaxHoldReached(long nowNanos) {
		return this.state == State.HELD && this.autoRenew && this.maxHoldNanos != 0
				&& nowNanos - (this.acquiredAtNanos + this.maxHoldNanos) >= 0;
	}

	/** A renewal succeeded: the renewals no longer fail. The caller holds {@code this}. */
	public final void renewalSucceeded() {
		this.lastRenewal = Instant.now();
		this.renewalFailingSince = null;
		this.lastRenewalError = null;
	}

	/** A renewal failed: remember since when they fail and why, in words, for health reports. Holds {@code this}. */
	public final void renewalFailure(String error) {
		if (this.renewalFailingSince == null) {
			this.renewalFailingSince = Instant.now();
		}
		this.lastRenewalError = error;
	}

	/** When the renewals of this held lease started failing, or null when the last attempt succeeded (or none failed). */
	final synchronized @Nullable Instant renewalFailingSince() {
		return (this.state == State.HELD) ? this.renewalFailingSince : null;
	}

	final synchronized @Nullable String lastRenewalError() {
		return this.lastRenewalError;
	}

	/**
	 * The operator's picture of this lease at {@code nowNanos}: a lease that is no longer held (lost, or ended and not
	 * yet forgotten) has no time left, whatever this process last confirmed, and a listed lease shows one hold at least.
	 */
	public final synchronized LeaseSnapshot snapshot(long nowNanos) {
		long remaining = (this.state == State.HELD) ? Math.max(0, this.validUntilNanos - nowNanos) : 0;
		return new LeaseSnapshot(this.key, this.name, this.owner, this.ownerThread, this.acquiredAt,
				Math.max(this.holds, 1), Duration.ofMillis(this.ttlMillis), Duration.ofNanos(remaining),
				this.lastRenewal, this.token, this.autoRenew, this.state == State.LOST, lockMode());
	}

	public static long earlier(long a, long b) {
		return (a - b < 0) ? a : b;
	}

	public static long later(long a, long b) {
		return (a - b < 0) ? b : a;
	}

	@Override
	public String toString() {
		// never the owner id: what a release presents to Redis stays out of logs
		return "lease '" + LogSafe.escape(this.key) + "' (held by " + this.holder + ", token " + this.token + ")";
	}

}
