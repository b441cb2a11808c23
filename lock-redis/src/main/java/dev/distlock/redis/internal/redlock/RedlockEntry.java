package dev.distlock.redis.internal.redlock;

import java.util.List;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockMode;
import dev.distlock.core.LockOwner;
import dev.distlock.redis.internal.lease.LeaseRecord;
import dev.distlock.redis.internal.lease.PendingReentries;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.StoredLease;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * What this process knows of one Redlock lease: its owner id (the same on every node), the token each node issued
 * (0 where the node did not grant it or did not answer), the fencing token, the holds, and until when a quorum is
 * known to keep it.
 * <p>
 * The record itself ({@link LeaseRecord}) is the one both engines keep; what is Redlock's own is the per-node tokens
 * (with the late grants adopted after the quorum) and the validity arithmetic of its callers: {@code validUntilNanos}
 * is always the send time of a call that a quorum confirmed, plus the lease time it set, minus the clock drift
 * allowance, so the process never believes longer than a quorum holds. Its state only moves from HELD to RELEASED or
 * LOST (never EXPIRED).
 */
public final class RedlockEntry extends LeaseRecord {

	/** Per node, the token it issued for this lease; 0 where it did not grant it (or its reply was lost). */
	private final long[] tokens;

	RedlockEntry(String key, String redisKey, String owner, String name, long[] tokens, long ttlMillis,
			boolean autoRenew, long validUntilNanos, String holderApplication, String holderInstance) {
		this(key, redisKey, owner, name, tokens, ttlMillis, autoRenew, validUntilNanos, LockOwner.current(),
				holderApplication, holderInstance);
	}

	private RedlockEntry(String key, String redisKey, String owner, String name, long[] tokens, long ttlMillis,
			boolean autoRenew, long validUntilNanos, LockOwner lockOwner, String holderApplication,
			String holderInstance) {
		super(key, redisKey, LockScripts.channel(redisKey), owner, name, greatest(tokens), lockOwner,
				HolderLabel.of(holderApplication, holderInstance, lockOwner), System.nanoTime(), ttlMillis, autoRenew,
				validUntilNanos);
		this.tokens = tokens.clone();
	}

	/** The fencing token: the greatest of the tokens the granting nodes issued. */
	private static long greatest(long[] tokens) {
		long max = 0;
		for (long token : tokens) {
			max = Math.max(max, token);
		}
		return max;
	}

	/** Redlock takes exclusive locks only. */
	@Override
	public LockMode lockMode() {
		return LockMode.EXCLUSIVE;
	}

	/** {@return the token node {@code node} issued, 0 when it did not grant this lease as far as we know} */
	synchronized long token(int node) {
		return this.tokens[node];
	}

	/**
	 * {@return what the renewal script needs of this lease on node {@code node} (its key and owner id, with that node's
	 * token), or null when that node does not hold it as far as we know}
	 */
	synchronized @Nullable NodeLease onNode(int node) {
		return (this.tokens[node] != 0) ? new NodeLease(this, this.tokens[node]) : null;
	}

	/**
	 * A node's grant that came after the quorum was counted: while the lease is held, that node is renewed (and
	 * released) with its token too, so the lease keeps every node that has it. The fencing token stays as it was
	 * handed out.
	 */
	synchronized void adopt(int node, long token) {
		if (this.state == State.HELD && this.tokens[node] == 0 && token > 0) {
			this.tokens[node] = token;
		}
	}

	/**
	 * Count one more hold, that of {@code reentry}, confirmed by a quorum at {@code validUntilNanos}; false when the
	 * lease is no longer held.
	 */
	boolean reenter(long ttlMillis, boolean autoRenew, long validUntilNanos, PendingReentries.Reentry reentry) {
		return reenterUntil(ttlMillis, autoRenew, validUntilNanos, reentry);
	}

	/** One hold released; returns the holds left. */
	synchronized int releaseHold() {
		this.holds = Math.max(0, this.holds - 1);
		if (this.holds == 0 && this.state == State.HELD) {
			this.state = State.RELEASED;
		}
		return this.holds;
	}

	/** When the longest hold of this renewed lease ends, or {@code fallback} when it has none (or is fixed). */
	synchronized long maxHoldEndsNanos(long fallback) {
		return (this.autoRenew && this.maxHoldNanos != 0) ? this.acquiredAtNanos + this.maxHoldNanos : fallback;
	}

	/** A quorum confirmed a renewal or extension: the lease is valid until {@code validUntilNanos} at least. */
	synchronized void confirmed(long validUntilNanos, boolean renewal) {
		this.validUntilNanos = later(this.validUntilNanos, validUntilNanos);
		if (renewal) {
			renewalSucceeded();
		}
	}

	/** A replacing extension: the lease is valid until exactly {@code validUntilNanos}, and renewed to {@code ttl}. */
	synchronized void replaced(long validUntilNanos, long ttlMillis) {
		this.validUntilNanos = validUntilNanos;
		this.ttlMillis = ttlMillis;
	}

	/** A renewal round missed the quorum. */
	synchronized void renewalFailed(String error) {
		renewalFailure(error);
	}

	/**
	 * One Redlock lease as one node's store sees it: the lease's key, owner id and channel, with the token that node
	 * issued. A view made for one renewal round, not a second record: the lease is its {@link RedlockEntry} alone.
	 */
	record NodeLease(RedlockEntry lease, long token) implements StoredLease {

		@Override
		public String redisKey() {
			return this.lease.redisKey;
		}

		@Override
		public String owner() {
			return this.lease.owner;
		}

		@Override
		public String channel() {
			return this.lease.channel;
		}

		@Override
		public long ttlMillis() {
			return this.lease.ttlMillis();
		}

		@Override
		public long holdsBeforeRelease() {
			return this.lease.holdsBeforeRelease();
		}

		/** Redlock takes exclusive locks only: {@link LockScripts#RENEW_ALL}. */
		@Override
		@SuppressWarnings("rawtypes")
		public RedisScript<List> renewAllScript() {
			return LockScripts.RENEW_ALL;
		}

	}

}
