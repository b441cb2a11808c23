package dev.distlock.redis;

import java.time.Duration;
import java.time.Instant;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LeaseSnapshot;
import dev.distlock.core.LockLostEvent;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import org.jspecify.annotations.Nullable;

/**
 * What this process knows of one Redlock lease: its owner id (the same on every node), the token each node issued
 * (0 where the node did not grant it or did not answer), the fencing token, the holds, and until when a quorum is
 * known to keep it.
 * <p>
 * Invariants: {@code validUntilNanos} is always the send time of a call that a quorum confirmed, plus the lease time
 * it set, minus the clock drift allowance, so the process never believes longer than a quorum holds; the state only
 * moves from HELD to RELEASED or LOST, and a LOST entry keeps its {@link #lostEvent()} for the holder's release. A
 * renewed lease with a longest hold ({@link #capHold}) is given up by the watchdog once it has been held that long
 * since this entry was made ({@link #isMaxHoldReached}); re-entries do not move the cap.
 */
final class RedlockEntry {

	enum State {
		HELD, RELEASED, LOST
	}

	final String key;

	final String redisKey;

	final String channel;

	final String owner;

	final String name;

	final long fencingToken;

	/** For operators: the name of the thread that acquired the lease, or the owner's when it is not a thread. */
	final String ownerThread;

	/** Whose lease this is for re-entry: {@link LockOwner#current()} on the acquiring thread. */
	final LockOwner lockOwner;

	/** Who holds it, for log lines, messages and {@link dev.distlock.core.Lease#holder()}; never {@link #owner}. */
	final HolderLabel holder;

	final Instant acquiredAt;

	/** When this entry was made, after a quorum granted the lease ({@link System#nanoTime()}). */
	final long acquiredAtNanos;

	/** The {@link dev.distlock.core.Lease#onLost} actions of its holds. */
	final LostActions lostActions = new LostActions();

	/** Per node, the token it issued for this lease; 0 where it did not grant it (or its reply was lost). */
	private final long[] tokens;

	/** Per node, the entry the renewal script reads (key, owner, that node's token); null where tokens[i] is 0. */
	private final @Nullable LeaseEntry[] carriers;

	private State state = State.HELD;

	private int holds = 1;

	/** Re-entries sent and not answered yet, guarded by {@code this}. */
	private final PendingReentries reentries = new PendingReentries();

	private long ttlMillis;

	private boolean autoRenew;

	private long validUntilNanos;

	/** The longest hold of a renewed lease, from {@link #acquiredAtNanos}; 0 for none. */
	private long maxHoldNanos;

	private @Nullable Instant lastRenewal;

	private @Nullable LockLostEvent lostEvent;

	private @Nullable Instant renewalFailingSince;

	private @Nullable String lastRenewalError;

	RedlockEntry(String key, String redisKey, String owner, String name, long[] tokens, long ttlMillis,
			boolean autoRenew, long validUntilNanos, String holderApplication, String holderInstance) {
		this.key = key;
		this.redisKey = redisKey;
		this.channel = RedisLockService.channel(redisKey);
		this.owner = owner;
		this.name = name;
		this.tokens = tokens.clone();
		long max = 0;
		for (long token : tokens) {
			max = Math.max(max, token);
		}
		this.fencingToken = max;
		this.lockOwner = LockOwner.current();
		this.holder = HolderLabel.of(holderApplication, holderInstance, this.lockOwner);
		this.ownerThread = this.lockOwner.isThread() ? Thread.currentThread().getName() : this.lockOwner.toString();
		this.acquiredAt = Instant.now();
		this.acquiredAtNanos = System.nanoTime();
		this.ttlMillis = ttlMillis;
		this.autoRenew = autoRenew;
		this.validUntilNanos = validUntilNanos;
		this.carriers = new LeaseEntry[tokens.length];
		for (int i = 0; i < tokens.length; i++) {
			if (tokens[i] != 0) {
				this.carriers[i] = new LeaseEntry(key, redisKey, this.channel, owner, name, tokens[i], ttlMillis, true,
						System.nanoTime(), 0, this.lockOwner, this.holder, LockMode.EXCLUSIVE);
			}
		}
	}

	/** {@return the token node {@code node} issued, 0 when it did not grant this lease as far as we know} */
	synchronized long token(int node) {
		return this.tokens[node];
	}

	/** {@return the entry the renewal script needs for node {@code node}, or null when that node does not hold it} */
	synchronized @Nullable LeaseEntry carrier(int node) {
		return this.carriers[node];
	}

	/**
	 * A node's grant that came after the quorum was counted: while the lease is held, that node is renewed (and
	 * released) with its token too, so the lease keeps every node that has it. The fencing token stays as it was
	 * handed out.
	 */
	synchronized void adopt(int node, long token) {
		if (this.state == State.HELD && this.tokens[node] == 0 && token > 0) {
			this.tokens[node] = token;
			this.carriers[node] = new LeaseEntry(this.key, this.redisKey, this.channel, this.owner, this.name, token,
					this.ttlMillis, true, System.nanoTime(), 0, this.lockOwner, this.holder, LockMode.EXCLUSIVE);
		}
	}

	/**
	 * Count one more hold, that of {@code reentry}, confirmed by a quorum at {@code validUntilNanos}; false when the
	 * lease is no longer held.
	 */
	synchronized boolean reenter(long ttlMillis, boolean autoRenew, long validUntilNanos,
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

	/** One hold released; returns the holds left. */
	synchronized int releaseHold() {
		this.holds = Math.max(0, this.holds - 1);
		if (this.holds == 0 && this.state == State.HELD) {
			this.state = State.RELEASED;
		}
		return this.holds;
	}

	synchronized int holds() {
		return this.holds;
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
	synchronized long holdsBeforeRelease() {
		return this.reentries.holdsBeforeRelease(this.holds);
	}

	synchronized State state() {
		return this.state;
	}

	synchronized boolean isHeld(long nowNanos) {
		return this.state == State.HELD && this.validUntilNanos - nowNanos > 0;
	}

	synchronized long ttlMillis() {
		return this.ttlMillis;
	}

	synchronized boolean autoRenew() {
		return this.autoRenew;
	}

	synchronized long validUntilNanos() {
		return this.validUntilNanos;
	}

	/** Cap the hold of this lease at {@code maxHold}, before the watchdog sees it; nothing for null. */
	synchronized void capHold(@Nullable Duration maxHold) {
		if (maxHold != null) {
			this.maxHoldNanos = Math.max(1, maxHold.toNanos());
		}
	}

	/** Whether this held, renewed lease has been held for its longest hold at {@code nowNanos}. */
	synchronized boolean isMaxHoldReached(long nowNanos) {
		return this.state == State.HELD && this.autoRenew && this.maxHoldNanos != 0
				&& nowNanos - (this.acquiredAtNanos + this.maxHoldNanos) >= 0;
	}

	/** When the longest hold of this renewed lease ends, or {@code fallback} when it has none (or is fixed). */
	synchronized long maxHoldEndsNanos(long fallback) {
		return (this.autoRenew && this.maxHoldNanos != 0) ? this.acquiredAtNanos + this.maxHoldNanos : fallback;
	}

	/** A quorum confirmed a renewal or extension: the lease is valid until {@code validUntilNanos} at least. */
	synchronized void confirmed(long validUntilNanos, boolean renewal) {
		this.validUntilNanos = later(this.validUntilNanos, validUntilNanos);
		if (renewal) {
			this.lastRenewal = Instant.now();
			this.renewalFailingSince = null;
			this.lastRenewalError = null;
		}
	}

	/** A replacing extension: the lease is valid until exactly {@code validUntilNanos}, and renewed to {@code ttl}. */
	synchronized void replaced(long validUntilNanos, long ttlMillis) {
		this.validUntilNanos = validUntilNanos;
		this.ttlMillis = ttlMillis;
	}

	/** A renewal round missed the quorum. */
	synchronized void renewalFailed(String error) {
		if (this.renewalFailingSince == null) {
			this.renewalFailingSince = Instant.now();
		}
		this.lastRenewalError = error;
	}

	synchronized @Nullable Instant renewalFailingSince() {
		return (this.state == State.HELD) ? this.renewalFailingSince : null;
	}

	synchronized @Nullable String lastRenewalError() {
		return this.lastRenewalError;
	}

	/** Mark the lease lost; returns the event, or null when it had ended already (released or lost before). */
	synchronized @Nullable LockLostEvent lose(LockLostEvent.Detection detection) {
		if (this.state != State.HELD) {
			return null;
		}
		this.state = State.LOST;
		this.lostEvent = new LockLostEvent(this.key, this.name, this.owner, this.fencingToken, detection, Instant.now(),
				this.holder);
		return this.lostEvent;
	}

	synchronized @Nullable LockLostEvent lostEvent() {
		return this.lostEvent;
	}

	synchronized LeaseSnapshot snapshot() {
		long remaining = Math.max(0, this.validUntilNanos - System.nanoTime());
		return new LeaseSnapshot(this.key, this.name, this.owner, this.ownerThread, this.acquiredAt,
				Math.max(this.holds, 1), Duration.ofMillis(this.ttlMillis),
				(this.state == State.HELD) ? Duration.ofNanos(remaining) : Duration.ZERO, this.lastRenewal,
				this.fencingToken, this.autoRenew, this.state == State.LOST);
	}

	private static long later(long a, long b) {
		return (b - a > 0) ? b : a;
	}

}
