package dev.distlock.redis;

import dev.distlock.core.LockOwner;

/** One acquisition: its owner id, fresh and never used for another; whether a call of it went unanswered. */
final class Attempt {

	final String redisKey;

	final String channel;

	final String owner;

	final long ttlMillis;

	/** Whose lease it becomes, for re-entry. */
	final LockOwner lockOwner;

	/** Set by the acquisition only (one thread at a time; an asynchronous one hands over through its future chain). */
	volatile boolean unanswered;

	Attempt(String redisKey, String owner, long ttlMillis, LockOwner lockOwner) {
		this.lockOwner = lockOwner;
		this.redisKey = redisKey;
		this.channel = RedisLockService.channel(redisKey);
		this.owner = owner;
		this.ttlMillis = ttlMillis;
	}

}
