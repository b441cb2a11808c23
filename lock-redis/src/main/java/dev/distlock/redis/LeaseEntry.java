package dev.distlock.redis;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.core.LogSafe;
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
final class LeaseEntry implements StoredLease {

	enum State {
		HELD, RELEASED, LOST, EXPIRED
	}

	final String key;

	final String redisKey;

	final String channel;

	final String owner;

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

	final String name;

	/** EXCLUSIVE, FAIR ({@link FairScripts}), or READ / WRITE ({@link ReadWriteScripts}). */
	final LockMode mode;

	/** What its kind of lock does ({@link LockKind}): every branch on {@link #mode} is one of its hooks. */
	final LockKind kind;

	final long token;

	final Instant acquiredAt;

	final long acquiredAtNanos;

	/** The {@link dev.distlock.core.Lease#onLost} actions of its holds. */
	final LostActions lostActions = new LostActions();

	/** How many times in a row the lease was handed from one owner of this process to another to get here. */
	final int handOvers;

	private volatile State state = State.HELD;

	private int holds;

	/** Re-entries sent and not answered yet, guarded by {@code this}. */
	private final PendingReentries reentries = new PendingReentries();

	private long ttlMillis;

	private boolean autoRenew;

	private long validUntilNanos;

	private long nextRenewalNanos;

	private boolean renewalInFlight;

	/** When the renewal in flight was sent, 0 while it is only claimed (or none is in flight). */
	private long renewalSentNanos;

	/** When the renewal in flight counts as failed if unanswered; meaningful while {@code renewalSentNanos != 0}. */
	private long renewalDeadlineNanos;

	private boolean lastHoldReleasing;

	/** The longest hold of a renewed lease, from {@code acquiredAtNanos}; 0 for none. See the class comment. */
	private long maxHoldNanos;

	private @Nullable Instant lastRenewal;

	private @Nullable LockLostEvent lostEvent;

	/** When the renewals of this lease started failing (the first failure since the last success), or null. */
	private @Nullable Instant renewalFailingSince;

	private @Nullable String lastRenewalError;

	LeaseEntry(String key, String redisKey, String channel, String owner, String name, long token, long ttlMillis,
			boolean autoRenew, long sentAtNanos, int handOvers) {
		this(key, redisKey, channel, owner, name, token, ttlMillis, autoRenew, sentAtNanos, handOvers,
				LockOwner.current());
	}

	LeaseEntry(String key, String redisKey, String channel, String owner, String name, long token, long ttlMillis,
			boolean autoRenew, long sentAtNanos, int handOvers, LockOwner lockOwner) {
		this(key, redisKey, channel, owner, name, token, ttlMillis, autoRenew, sentAtNanos, handOvers, lockOwner,
				HolderLabel.of(HolderLabel.DEFAULT_APPLICATION, HolderLabel.hostName(), lockOwner), LockMode.EXCLUSIVE);
	}

	LeaseEntry(String key, String redisKey, String channel, String owner, String name, long token, long ttlMillis,
			boolean autoRenew, long sentAtNanos, int handOvers, LockOwner lockOwner, HolderLabel holder,
			LockMode mode) {
		this.mode = mode;
		this.kind = LockKind.of(mode);
		this.lockOwner = lockOwner;
		this.holder = holder;
		this.handOvers = handOvers;
		this.key = key;
		this.redisKey = redisKey;
		this.channel = channel;
		this.owner = owner;
		// an owner that is not a thread is named by itself: the engine thread that completes its acquisition says nothing
		this.ownerThread = lockOwner.isThread() ? Thread.currentThread().getName() : lockOwner.toString();
		this.name = name;
		this.token = token;
		this.acquiredAt = Instant.now();
		this.acquiredAtNanos = sentAtNanos;
		this.holds = 1;
		this.ttlMillis = ttlMillis;
		this.autoRenew = autoRenew;
		this.validUntilNanos = sentAtNanos + ttlMillis * 1_000_000L;
	}

	/**
	 * Count one more hold of this lease, that of {@code reentry}, which Redis counted. Returns false when the entry is no
	 * longer HELD (the caller then starts a new entry). A re-entry with a longer lease time or with renewal widens the
	 * entry: it never shortens a lease.
	 */
	synchronized boolean reenter(long ttlMillis, boolean autoRenew, long sentAtNanos,
			PendingReentries.Reentry reentry) {
		if (this.state != State.HELD) {
			this.reentries.answered(reentry);
			return false;
		}
		this.reentries.counted(reentry); // with the hold, in one step (see PendingReentries)
		this.holds++;
		this.ttlMillis = Math.max(this.ttlMillis, ttlMillis);
		this.autoRenew |= autoRenew;
		this.validUntilNanos = later(this.validUntilNanos, sentAtNanos + ttlMillis * 1_000_000L);
		return true;
	}

	/**
	 * {@return one more re-entry on its way, with the hold count it is to reach in Redis} (see
	 * {@link PendingReentries}); {@link #reenter} counts it, else pair it with {@link #reentryAnswered}.
	 */
	synchronized PendingReentries.Reentry reentryTarget() {
		return this.reentries.reserve(this.holds);
	}

	/** The re-entry was answered without a hold counted, or given up; nothing when {@link #reenter} counted it. */
	synchronized void reentryAnswered(PendingReentries.Reentry reentry) {
		this.reentries.answered(reentry);
	}

	/** {@return the holds Redis counts at least while a release is sent} (see {@link PendingReentries}). */
	public synchronized long holdsBeforeRelease() {
		return this.reentries.holdsBeforeRelease(this.holds);
	}

	synchronized State state() {
		return this.state;
	}

	/** Whether the lease was found lost; a lock-free read for diagnostics (see the class comment). */
	boolean isLost() {
		return this.state == State.LOST;
	}

	synchronized boolean isHeld(long nowNanos) {
		return this.state == State.HELD && nowNanos - this.validUntilNanos < 0;
	}

	synchronized boolean isAutoRenew() {
		return this.autoRenew;
	}

	/** The holds (re-entries) this process has open on the lease. */
	synchronized int holds() {
		return this.holds;
	}

	public synchronized long ttlMillis() {
		return this.ttlMillis;
	}

	synchronized @Nullable LockLostEvent lostEvent() {
		return this.lostEvent;
	}

	/** The holder is about to send the release (or hand-over) of a hold; see the class comment. */
	synchronized void releaseStarting() {
		if (this.holds == 1) {
			this.lastHoldReleasing = true;
		}
	}

	/** Record that one hold was released; returns true when it was the last, which ends the entry. */
	synchronized boolean releaseHold(boolean last) {
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

	/** Mark the lease lost unless it already ended; returns the event to publish, or null if it already ended. */
	synchronized @Nullable LockLostEvent markLost(LockLostEvent.Detection detection) {
		if (this.state != State.HELD) {
			return null;
		}
		this.state = State.LOST;
		this.lostEvent = new LockLostEvent(this.key, this.name, this.owner, this.token, detection, Instant.now(),
				this.holder);
		return this.lostEvent;
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
		this.state = State.LOST;
		this.lostEvent = new LockLostEvent(this.key, this.name, this.owner, this.token, detection, Instant.now(),
				this.holder);
		return this.lostEvent;
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

	/** The moment ({@link System#nanoTime()}) until which Redis keeps the lease at least; see the class comment. */
	synchronized long validUntilNanos() {
		return this.validUntilNanos;
	}

	/**
	 * Cap the hold of this lease at {@code maxHold} from its acquisition (see the class comment); called once, before
	 * the entry is registered with the watchdog. Nothing for null.
	 */
	synchronized void capHold(@Nullable Duration maxHold) {
		if (maxHold != null) {
			this.maxHoldNanos = Math.max(1, maxHold.toNanos());
		}
	}

	// watchdog side

	/**
	 * Whether the watchdog must give up this renewed lease at {@code nowNanos}, because it has been held for its
	 * longest hold. A fixed lease is never given up for it: it ends at its lease time, which is not beyond the cap.
	 */
	synchronized boolean isMaxHoldReached(long nowNanos) {
		return this.state == State.HELD && this.autoRenew && this.maxHoldNanos != 0
				&& nowNanos - (this.acquiredAtNanos + this.maxHoldNanos) >= 0;
	}

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
		this.lastRenewal = Instant.now();
		this.renewalFailingSince = null;
		this.lastRenewalError = null;
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
		if (this.renewalFailingSince == null) {
			this.renewalFailingSince = Instant.now();
		}
		this.lastRenewalError = error;
	}

	/** When the renewals of this held lease started failing, or null when the last attempt succeeded (or none failed). */
	synchronized @Nullable Instant renewalFailingSince() {
		return (this.state == State.HELD) ? this.renewalFailingSince : null;
	}

	synchronized @Nullable String lastRenewalError() {
		return this.lastRenewalError;
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


	synchronized LeaseSnapshot snapshot(long nowNanos) {
		// a lost lease has no time left, whatever this process last confirmed
		long remaining = (this.state == State.LOST) ? 0 : Math.max(0, this.validUntilNanos - nowNanos);
		return new LeaseSnapshot(this.key, this.name, this.owner, this.ownerThread, this.acquiredAt, this.holds,
				Duration.ofMillis(this.ttlMillis), Duration.ofNanos(remaining), this.lastRenewal, this.token,
				this.autoRenew, this.state == State.LOST, this.mode);
	}

	private static long earlier(long a, long b) {
		return (a - b < 0) ? a : b;
	}

	private static long later(long a, long b) {
		return (a - b < 0) ? b : a;
	}

	@Override
	public String toString() {
		// never the owner id: what a release presents to Redis stays out of logs
		return "lease '" + LogSafe.escape(this.key) + "' (held by " + this.holder + ", token " + this.token + ")";
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
