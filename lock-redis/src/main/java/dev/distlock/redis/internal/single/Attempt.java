package dev.distlock.redis.internal.single;

import dev.distlock.core.HolderLabel;
import dev.distlock.core.LockOwner;
import dev.distlock.redis.internal.lease.HoldReconciler;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.store.StoredAttempt;

import org.jspecify.annotations.Nullable;

/**
 * One acquisition: its owner id, fresh and never used for another; whether a call of it went unanswered; its kind
 * and, for a reader whose owner holds the write lock, that write lease (a downgrade).
 */
public final class Attempt implements StoredAttempt {

	final String redisKey;

	final String channel;

	/** The lock key the request named (as the caller wrote it), for messages. */
	public final String key;

	final String owner;

	final long ttlMillis;

	/** Whose lease it becomes, for re-entry. */
	final LockOwner lockOwner;

	/** Who the lease's holder is for log lines and messages, described on the acquiring thread. */
	final HolderLabel holder;

	/**
	 * {@link #holder} as the lease stores it ({@link LockScripts#LABEL_PREFIX}): its one-line form; empty when the
	 * service stores no labels.
	 */
	final String label;

	/** What its kind of lock does ({@link LockKind}), chosen once for the request. */
	final LockKind kind;

	/** For a downgrade: the owner id of the write lease the same {@link LockOwner} holds, else empty. */
	final String downgradeOwner;

	/** For a downgrade: the token of that write lease, else 0. */
	final long downgradeToken;

	/**
	 * Whether Redis may have something of this owner id that the acquisition did not get: a call went unanswered, or
	 * a waiting writer's note is in the lease. Set by the acquisition only (one thread at a time; an asynchronous one
	 * hands over through its future chain).
	 */
	public volatile boolean unanswered;

	Attempt(String key, String redisKey, String owner, long ttlMillis, LockOwner lockOwner, HolderLabel holder, String label,
			LockKind kind, @Nullable LeaseEntry downgradeFrom) {
		this.lockOwner = lockOwner;
		this.holder = holder;
		this.label = label;
		this.key = key;
		this.redisKey = redisKey;
		this.channel = LockScripts.channel(redisKey);
		this.owner = owner;
		this.ttlMillis = ttlMillis;
		this.kind = kind;
		this.downgradeOwner = (downgradeFrom != null) ? downgradeFrom.owner : "";
		this.downgradeToken = (downgradeFrom != null) ? downgradeFrom.token : 0;
	}

	/**
	 * Hand this attempt, an acquisition of the lock {@code key} that got no lease, to {@code reconciler}, which makes
	 * sure its owner holds nothing; for a fair lock ({@code fair}) with {@code FAIR_LEAVE}: the owner's queue entry
	 * goes, and a lease it holds is handed on to the next live waiter rather than deleted (the queue stays). Tried for
	 * the attempt's ttl.
	 */
	void discardWith(HoldReconciler reconciler, String key, boolean fair) {
		reconciler.discard(key, this.redisKey, this.owner, this.holder, this.channel, fair, this.ttlMillis);
	}

	// what the store sends of it (StoredAttempt): its final fields

	@Override
	public String redisKey() {
		return this.redisKey;
	}

	@Override
	public String owner() {
		return this.owner;
	}

	@Override
	public long ttlMillis() {
		return this.ttlMillis;
	}

	@Override
	public String downgradeOwner() {
		return this.downgradeOwner;
	}

	@Override
	public long downgradeToken() {
		return this.downgradeToken;
	}

	@Override
	public String label() {
		return this.label;
	}

}
