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
	 * KEYS[1] lease, KEYS[2] its fair queue. {holds, token, remaining ttl ms, mode ('' exclusive, 'r', 'w'), fair queue
	 * length (-1 when it could not be read), processes noted as waiting, the holders' labels as
	 * {@link LockScripts#LABELS} joins them ('' when none)}; empty when the key is not a lease. Reads only; the queue
	 * length through {@code pcall}, so that an ACL without {@code +zcard} costs only that figure.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> DESCRIBE = RedisScript.of(LockScripts.LABELS + """
			local fields = redis.call('hgetall', KEYS[1])
			local holds, token, mode, waiting = 0, 0, '', 0
			for i = 1, #fields, 2 do
			  local field = fields[i]
			  if field == '~t' then
			    token = tonumber(fields[i + 1]) or 0
			  elseif field == '~m' then
			    mode = fields[i + 1]
			  elseif string.sub(field, 1, 3) == '~w:' then
			    waiting = waiting + 1
			  elseif string.sub(field, 1, 1) ~= '~' then
			    holds = holds + (tonumber(fields[i + 1]) or 0)
			  end
			end
			if holds < 1 then
			  return {}
			end
			local queue = redis.pcall('zcard', KEYS[2])
			if type(queue) ~= 'number' then
			  queue = -1
			end
			return {holds, token, redis.call('pttl', KEYS[1]), mode, queue, waiting, labels(fields)}
			""", List.class);

	private ListingScripts() {
	}

}
