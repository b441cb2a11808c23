package dev.distlock.redis;

/** One acquisition: its owner id, fresh and never used for another; whether a call of it went unanswered. */
final class Attempt {

	final String redisKey;

	final String channel;

	final String owner;

	final long ttlMillis;

	/** Set on the acquiring thread only. */
	boolean unanswered;

	Attempt(String redisKey, String owner, long ttlMillis) {
		this.redisKey = redisKey;
		this.channel = RedisLockService.channel(redisKey);
		this.owner = owner;
		this.ttlMillis = ttlMillis;
	}

}
