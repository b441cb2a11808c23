package dev.distlock.redis.internal.single;

import java.util.List;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.redis.internal.lease.LeaseRecord;
import dev.distlock.redis.internal.lease.PendingReentries;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.store.StoredLease;

import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * What this process knows about one lease it holds: one per (key, owner, fencing token), shared by the handles of all
 * its re-entries, and the unit the watchdog renews.
 * <p>
 * Invariants (all mutable state is guarded by {@code this}):
 * <ul>
 * <li>{@code state} only moves forward: HELD to RELEASED, LOST or EXPIRED, never back. Only a HELD entry is renewed,
 * and a renewal result is applied only while the entry is still HELD, so a release racing with a renewal can neither
 * resurrect the lease (the scripts also check the token in Redis) nor be reported as a loss.</li>
 * <li>{@code validUntilNanos} never overstates the lease: it is the send time of the last successful acquire, renewal
 * or extension plus the lease time that command set, so the lease in Redis lives at least that long.</li>
 * <li>{@code renewalInFlight} is true between the watchdog handing the entry to a renewal batch and that batch's
 * result, so a slow or stuck renewal is never sent twice.</li>
 * <li>A lease is lost by the clock ({@link #isLostByClock}) only when no renewal that could still keep it is on its
 * way: once {@code validUntilNanos} has passed, a renewal sent before that moment and not yet answered or timed out
 * ({@code renewalSentNanos}, {@code renewalDeadlineNanos}) may still answer "yours", which proves that Redis kept the
 * lease all along (the renewal script never creates one). Meanwhile the lease is not {@link #isHeld valid}: the holder
 * is not told it holds what the clock cannot vouch for, but nothing calls it lost, and the engine does not discard
 * it from Redis, before its own renewal has failed.</li>
 * <li>{@code lastHoldReleasing} is set before the holder sends the release (or hand-over) of its last hold. Redis may
 * run that release before a renewal already on its way, which then finds the lease gone; and the renewal's reply may
 * be applied before the holder's thread has applied its own. Such a renewal result is not a loss: the release's reply
 * decides (and reports a loss itself if the lease was really gone). No renewal is sent for a releasing lease.</li>
 * <li>{@code maxHoldNanos}, set once before the entry is registered with the watchdog, caps how long a renewed lease
 * is kept: from {@code acquiredAtNanos + maxHoldNanos} on, no renewal is claimed, and the watchdog marks the entry
 * LOST ({@code MAX_HOLD_EXCEEDED}) at its next look, which {@link #nextCheckNanos} schedules for that moment. Its
 * re-entries do not move the cap (the first acquisition's rules). A renewal claimed before the cap and answered after
 * it finds the entry no longer HELD and changes nothing here; in Redis it may have added one lease time, which lapses
 * or goes with the holder's release.</li>
 * </ul>
 * {@code state} is also volatile, so that the gauges and the health check can tell held from lost leases at scrape time
 * without taking the lock the holder's thread uses.
 */
public final class LeaseEntry extends LeaseRecord implements StoredLease {

	/** EXCLUSIVE, FAIR ({@link FairScripts}), or READ / WRITE ({@link ReadWriteScripts}). */
	final LockMode mode;

	/** What its kind of lock does ({@link LockKind}): every branch on {@link #mode} is one of its hooks. */
	public final LockKind kind;

	/** How many times in a row the lease was handed from one owner of this process to another to get here. */
	public final int handOvers;

	private long nextRenewalNanos;

	private boolean renewalInFlight;

	/** When the renewal in flight was sent, 0 while it is only claimed (or none is in flight). */
	private long renewalSentNanos;

	/** When the renewal in flight counts as failed if unanswered; meaningful while {@code renewalSentNanos != 0}. */
	private long renewalDeadlineNanos;

	private boolean lastHoldReleasing;

	public LeaseEntry(String key, String redisKey, String channel, String owner, String name, long token, long ttlMillis,
			boolean autoRenew, long sentAtNanos, int handOvers, LockKind kind) {
		this(key, redisKey, channel, owner, name, token, ttlMillis, autoRenew, sentAtNanos, handOvers,
				LockOwner.current(), kind);
	}

	public LeaseEntry(String key, String redisKey, String channel, String owner, String name, long token, long ttlMillis,
			boolean autoRenew, long sentAtNanos, int handOvers, LockOwner lockOwner, LockKind kind) {
		this(key, redisKey, channel, owner, name, token, ttlMillis, autoRenew, sentAtNanos, handOvers, lockOwner,
				HolderLabel.of(HolderLabel.DEFAULT_APPLICATION, HolderLabel.hostName(), lockOwner), kind);
	}

	public LeaseEntry(String key, String redisKey, String channel, String owner, String name, long token, long ttlMillis,
			boolean autoRenew, long sentAtNanos, int handOvers, LockOwner lockOwner, HolderLabel holder,
			LockKind kind) {
		super(key, redisKey, channel, owner, name, token, lockOwner, holder, sentAtNanos, ttlMillis, autoRenew,
				sentAtNanos + ttlMillis * 1_000_000L);
		this.mode = kind.mode();
		this.kind = kind;
		this.handOvers = handOvers;
	}

	@Override
	public LockMode lockMode() {
		return this.mode;
	}

	/**
	 * Count one more hold of this lease, that of {@code reentry}, which Redis counted. Returns false when the entry is no
	 * longer HELD (the caller then starts a new entry). A re-entry with a longer lease time or with renewal widens the
	 * entry: it never shortens a lease.
	 */
	boolean reenter(long ttlMillis, boolean autoRenew, long sentAtNanos, PendingReentries.Reentry reentry) {
		return reenterUntil(ttlMillis, autoRenew, sentAtNanos + ttlMillis * 1_000_000L, reentry);
	}

	/** The holder is about to send the release (or hand-over) of a hold; see the class comment. */
	public synchronized void releaseStarting() {
		if (this.holds == 1) {
			this.lastHoldReleasing = true;
		}
	}

	/** Record that one hold was released; returns true when it was the last, which ends the entry. */
	public synchronized boolean releaseHold(boolean last) {
		this.holds = Math.max(0, this.holds - 1);
		if (last || this.holds == 0) {
			this.holds = 0;
			if (this.state == State.HELD) {
				this.state = State.RELEASED;
			}
			return true;
		}
		// a re-entry reached Redis before this release (a release from another thread than the holder's): holds are
		// left, so the lease needs its renewals again
		this.lastHoldReleasing = false;
		return false;
	}

	/**
	 * The holder found the lease gone from Redis: record the loss whatever the state (a fixed lease may have ended as
	 * EXPIRED already). Returns the new event, or null if a loss was already recorded.
	 */
	synchronized @Nullable LockLostEvent markLostByHolder() {
		if (this.lostEvent != null) {
			return null;
		}
		LockLostEvent.Detection detection = (this.state == State.EXPIRED) ? LockLostEvent.Detection.EXPIRED
				: LockLostEvent.Detection.FOUND_GONE_BY_HOLDER;
		return lost(detection);
	}

	/** End a fixed lease whose time ran out while held; returns whether it was HELD. */
	synchronized boolean markExpired() {
		if (this.state != State.HELD) {
			return false;
		}
		this.state = State.EXPIRED;
		return true;
	}

	/** Note a successful extension or renewal by the holder that left {@code remainingMillis} on the lease. */
	synchronized void confirmed(long sentAtNanos, long remainingMillis) {
		if (this.state == State.HELD) {
			this.validUntilNanos = sentAtNanos + remainingMillis * 1_000_000L;
		}
	}

	/**
	 * Note that {@code Lease.isOwned} found the lease ours with {@code remainingMillis} left. Both this and the estimate
	 * before are lower bounds of the lease's life in Redis, so the later one is kept.
	 */
	synchronized void observed(long sentAtNanos, long remainingMillis) {
		if (this.state == State.HELD) {
			this.validUntilNanos = later(this.validUntilNanos, sentAtNanos + remainingMillis * 1_000_000L);
		}
	}

	/**
	 * Note that the holder set the lease's remaining time to exactly {@code ttlMillis}, which is its lease time from now
	 * on: the validity may shrink, and the next renewal of an auto-renewed lease comes one interval of the new time
	 * after the replace (unless one is in flight: its result reschedules). When Redis did not answer, the replace may
	 * have run or not, now or later: the entry assumes whichever leaves the lease shorter, so that the validity still
	 * never overstates it, and renews to the new time (which leaves a lease that was not replaced no shorter).
	 */
	synchronized void replaced(long sentAtNanos, long ttlMillis, long intervalNanos, boolean answered) {
		if (this.state != State.HELD) {
			return;
		}
		this.ttlMillis = ttlMillis;
		long replacedUntil = sentAtNanos + ttlMillis * 1_000_000L;
		this.validUntilNanos = answered ? replacedUntil : earlier(this.validUntilNanos, replacedUntil);
		if (!this.renewalInFlight && (answered || this.nextRenewalNanos == 0
				|| sentAtNanos + intervalNanos - this.nextRenewalNanos < 0)) {
			this.nextRenewalNanos = sentAtNanos + intervalNanos;
		}
	}

	/**
	 * A fair hand-over granted the lease only until {@code validUntilNanos} (a short grant, see {@link FairScripts}):
	 * the validity is that, and the first renewal, which raises the lease to its ttl, comes at {@code renewAtNanos}.
	 * Called before the entry is registered with the watchdog.
	 */
	synchronized void grantedUntil(long validUntilNanos, long renewAtNanos) {
		this.validUntilNanos = earlier(this.validUntilNanos, validUntilNanos);
		this.nextRenewalNanos = renewAtNanos;
	}

	/** Whether the holder is releasing its last hold; see the class comment. */
	synchronized boolean isReleasing() {
		return this.lastHoldReleasing;
	}

	// watchdog side

	/** Whether a renewal is due now (not merely soon) and none is in flight. */
	synchronized boolean isRenewalDue(long nowNanos, long intervalNanos) {
		if (this.state != State.HELD || !this.autoRenew || this.renewalInFlight || this.lastHoldReleasing
				|| isMaxHoldReached(nowNanos)) {
			return false;
		}
		long due = (this.nextRenewalNanos != 0) ? this.nextRenewalNanos : this.acquiredAtNanos + intervalNanos;
		return due - nowNanos <= 0;
	}

	/**
	 * Whether a renewal should be sent now: none is in flight and it is due within {@code earlyNanos}. The watchdog
	 * wakes when the earliest renewal is due and then lets leases due within a quarter of the renewal interval ride in
	 * the same batch instead of waking it again moments later.
	 */
	synchronized boolean claimRenewal(long nowNanos, long intervalNanos, long earlyNanos) {
		if (this.state != State.HELD || !this.autoRenew || this.renewalInFlight || this.lastHoldReleasing
				|| isMaxHoldReached(nowNanos)) {
			return false;
		}
		if (this.nextRenewalNanos == 0) {
			this.nextRenewalNanos = this.acquiredAtNanos + intervalNanos;
		}
		if (this.nextRenewalNanos - nowNanos > earlyNanos) {
			return false;
		}
		this.renewalInFlight = true;
		return true;
	}

	/** The renewal claimed by {@link #claimRenewal} was sent at {@code sentNanos}, and is given until {@code deadlineNanos}. */
	synchronized void renewalSent(long sentNanos, long deadlineNanos) {
		if (this.renewalInFlight) {
			this.renewalSentNanos = (sentNanos != 0) ? sentNanos : 1;
			this.renewalDeadlineNanos = deadlineNanos;
		}
	}

	/**
	 * Whether the lease must be given up by the clock at {@code nowNanos}: its validity has passed, and no renewal sent
	 * before that moment is still waiting for its answer (see the class comment).
	 */
	synchronized boolean isLostByClock(long nowNanos) {
		return nowNanos - this.validUntilNanos >= 0 && !awaitsRenewal(nowNanos);
	}

	/** A renewal sent while the lease was valid is on its way, and not yet past its deadline. */
	private boolean awaitsRenewal(long nowNanos) {
		return this.renewalInFlight && this.renewalSentNanos != 0 && this.renewalSentNanos - this.validUntilNanos < 0
				&& nowNanos - this.renewalDeadlineNanos < 0;
	}

	/** Apply a renewal result; returns the loss event to publish when the renewal found the lease gone. */
	synchronized @Nullable LockLostEvent renewalDone(boolean stillOurs, long sentAtNanos, long intervalNanos) {
		this.renewalInFlight = false;
		this.renewalSentNanos = 0;
		if (this.state != State.HELD) {
			return null;
		}
		if (!stillOurs) {
			// gone because of our own release on its way, or lost: the release's reply tells which
			return this.lastHoldReleasing ? null : markLost(LockLostEvent.Detection.RENEWAL_FOUND_GONE);
		}
		this.validUntilNanos = later(this.validUntilNanos, sentAtNanos + this.ttlMillis * 1_000_000L);
		this.nextRenewalNanos = sentAtNanos + intervalNanos;
		renewalSucceeded();
		return null;
	}

	/**
	 * A renewal could not reach Redis (or Redis refused it): try again after {@code retryNanos}, and remember why, in
	 * words, for health reports.
	 */
	synchronized void renewalFailed(long nowNanos, long retryNanos, String error) {
		this.renewalInFlight = false;
		this.renewalSentNanos = 0;
		this.nextRenewalNanos = nowNanos + retryNanos;
		renewalFailure(error);
	}

	/** The next moment the watchdog must look at this entry: also when its longest hold ends, if it has one. */
	synchronized long nextCheckNanos(long intervalNanos) {
		long next = nextCheckIgnoringCap(intervalNanos);
		if (this.autoRenew && this.maxHoldNanos != 0) {
			next = earlier(next, this.acquiredAtNanos + this.maxHoldNanos);
		}
		return next;
	}

	private long nextCheckIgnoringCap(long intervalNanos) {
		if (this.renewalInFlight && this.renewalSentNanos != 0 && this.renewalSentNanos - this.validUntilNanos < 0) {
			// its answer wakes the watchdog; if none comes, the lease is lost by the clock at the renewal's deadline
			return later(this.validUntilNanos, this.renewalDeadlineNanos);
		}
		if (!this.autoRenew || this.renewalInFlight || this.lastHoldReleasing) {
			return this.validUntilNanos;
		}
		long due = (this.nextRenewalNanos != 0) ? this.nextRenewalNanos : this.acquiredAtNanos + intervalNanos;
		return (due - this.validUntilNanos < 0) ? due : this.validUntilNanos;
	}

	// the store's view of the lease (StoredLease): its final fields, and its kind's renewal script

	@Override
	public String redisKey() {
		return this.redisKey;
	}

	@Override
	public String owner() {
		return this.owner;
	}

	@Override
	public long token() {
		return this.token;
	}

	@Override
	public String channel() {
		return this.channel;
	}

	@Override
	@SuppressWarnings("rawtypes")
	public RedisScript<List> renewAllScript() {
		return this.kind.renewAllScript();
	}

}
