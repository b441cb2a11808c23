package dev.distlock.redis.internal.store;

import java.time.Duration;
import java.util.Optional;

import dev.distlock.core.LockHolder;
import dev.distlock.core.LockUnavailableException;

/**
 * Asks Redis, not this process's bookkeeping, who holds a key: for {@code LockService.holder} and {@code isLocked}.
 * One read-only script call; it changes nothing in Redis or in this process.
 */
public final class HolderQuery {

	private final LeaseStore store;

	/**
	 * A query on {@code store}.
	 * @param store the store asked
	 */
	public HolderQuery(LeaseStore store) {
		this.store = store;
	}

	/**
	 * Who holds {@code key} now, as Redis says.
	 * @param key the lock's key
	 * @param redisKey its key in Redis
	 * @return the holder, or empty when none holds it
	 */
	public Optional<LockHolder> holder(String key, String redisKey) {
		LeaseStore.Held reply;
		try {
			reply = this.store.holder(redisKey);
		}
		catch (RuntimeException ex) {
			throw RedisFailures.of(key, redisKey, "ask who holds", ex, "");
		}
		if (reply == null || reply.holds() < 1) {
			// no lease, or only notes of waiting processes left on a key that expires with them
			return Optional.empty();
		}
		return Optional.of(new LockHolder(key, (int) Math.min(Integer.MAX_VALUE, reply.holds()),
				Duration.ofMillis(Math.max(0, reply.pttl())), reply.token(), reply.labels()));
	}

}
