package dev.distlock.redis.internal.store;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * A lease this process holds, as the store needs to see it to renew, release, extend or check it: its key, owner id,
 * token and channel, and the few values that change while it is held. The engine's lease entry implements it, so that
 * the store reads what it sends without knowing the lease core above it (issue 27's layers).
 * <p>
 * Implementations answer from their own state under their own lock: the store reads each value once per call and
 * never keeps the view beyond the call (a renewal round keeps the list until every batch was told).
 */
public interface StoredLease {

	/** {@return the lease's key in Redis} */
	String redisKey();

	/** {@return the owner id the lease is held under} */
	String owner();

	/** {@return the fencing token of the lease} */
	long token();

	/** {@return the channel its release is announced on} */
	String channel();

	/** {@return the lease time in ms, which bounds how long the receipt of a last release lasts} */
	long ttlMillis();

	/** {@return the holds its owner counts before this release, as the release script expects them} */
	long holdsBeforeRelease();

	/**
	 * {@return the script that renews leases of this one's kind in batches: leases are batched with others of the same
	 * script only}
	 */
	@SuppressWarnings("rawtypes")
	RedisScript<List> renewAllScript();

}
