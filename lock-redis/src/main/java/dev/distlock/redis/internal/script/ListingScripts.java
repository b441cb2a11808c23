package dev.distlock.redis.internal.script;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts of the store listing ({@code LockService.list}, the actuator's lock endpoint): a {@code SCAN} step over
 * one node, and the read of one lease found, whatever its kind. Both read only.
 */
public final class ListingScripts {

	/**
	 * KEYS[1] only routes the call; ARGV[1] scan cursor, ARGV[2] pattern, ARGV[3] count. One {@code SCAN} step over the
	 * node's hashes: {next cursor, keys}. Reads only.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> SCAN = RedisScript.of(
			"return redis.call('scan', ARGV[1], 'match', ARGV[2], 'count', ARGV[3], 'type', 'hash')", List.class);

	/**
	 * KEYS[1] lease, KEYS[2] its fair queue. {holds, token, remaining ttl ms, mode ('' exclusive, 'r', 'w', 'p' permits), fair queue
	 * length (-1 when it could not be read), processes noted as waiting, the holders' labels as
	 * {@link LockScripts#LABELS} joins them ('' when none)}; empty when the key is not a lease. Reads only; the queue
	 * length through {@code pcall}, so that an ACL without {@code +zcard} costs only that figure.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> DESCRIBE = RedisScript.of(
			LockScripts.LABELS + LuaSource.load("listing-describe.lua"), List.class);

	private ListingScripts() {
	}

}
