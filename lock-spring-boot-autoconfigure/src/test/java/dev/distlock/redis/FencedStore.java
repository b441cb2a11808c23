package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The storage the locks protect, on a Redis that no fault touches: per lock key a counter written by read-modify-write
 * and guarded by the lease's fencing token. A write is accepted only with a token at least the last accepted one, so a
 * holder that lost its lease cannot overwrite a newer holder's work; each accepted token is appended to a list so that
 * the order of accepted tokens can be checked at the end, independently of the script's own check.
 */
final class FencedStore {

	/**
	 * KEYS[1] the key's data hash, KEYS[2] its list of accepted tokens; ARGV[1] token, ARGV[2] the new value. Returns
	 * {1 accepted or 0 rejected, the last accepted token before this write}. Tokens are microseconds (below 2^53), exact
	 * as Lua numbers.
	 */
	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> WRITE = RedisScript.of("""
			local last = tonumber(redis.call('hget', KEYS[1], 'token') or '0')
			if tonumber(ARGV[1]) < last then
			  redis.call('hincrby', KEYS[1], 'rejected', 1)
			  return {0, last}
			end
			redis.call('hset', KEYS[1], 'token', ARGV[1], 'value', ARGV[2])
			redis.call('hincrby', KEYS[1], 'accepted', 1)
			redis.call('rpush', KEYS[2], ARGV[1])
			return {1, last}
			""", List.class);

	private final StringRedisTemplate template;

	FencedStore(StringRedisTemplate template) {
		this.template = template;
	}

	/** The outcome of one fenced write: accepted or not, and the last accepted token it met. */
	record Write(boolean accepted, long previousToken) {
	}

	/** Read the key's counter and write it back plus one, fenced by {@code token}. */
	Write increment(String key, long token) {
		String value = (String) this.template.opsForHash().get(dataKey(key), "value");
		long next = ((value != null) ? Long.parseLong(value) : 0) + 1;
		List<?> reply = this.template.execute(WRITE, List.of(dataKey(key), tokensKey(key)), Long.toString(token),
				Long.toString(next));
		if (reply == null || reply.size() != 2) {
			throw new IllegalStateException("Unexpected reply from the fenced write: " + reply);
		}
		return new Write(((Number) reply.get(0)).longValue() == 1, ((Number) reply.get(1)).longValue());
	}

	/** Accepted writes, rejected writes and the counter of {@code key}. */
	long[] totals(String key) {
		List<Object> values = this.template.opsForHash().multiGet(dataKey(key), List.of("accepted", "rejected", "value"));
		long[] totals = new long[3];
		for (int i = 0; i < 3; i++) {
			Object value = values.get(i);
			totals[i] = (value != null) ? Long.parseLong((String) value) : 0;
		}
		return totals;
	}

	/**
	 * The index of the first accepted token of {@code key} that is lower than the one before it, or -1 when they never
	 * go backwards; read in pages so that a long run's list does not come back as one reply.
	 */
	long firstBackwardStep(String key, long[] lengthOut) {
		long length = this.template.opsForList().size(tokensKey(key));
		lengthOut[0] = length;
		long previous = Long.MIN_VALUE;
		for (long from = 0; from < length; from += 10_000) {
			List<String> page = this.template.opsForList().range(tokensKey(key), from, Math.min(length, from + 10_000) - 1);
			for (int i = 0; i < page.size(); i++) {
				long token = Long.parseLong(page.get(i));
				if (token < previous) {
					return from + i;
				}
				previous = token;
			}
		}
		return -1;
	}

	private static String dataKey(String key) {
		return "data:{" + key + "}";
	}

	private static String tokensKey(String key) {
		return "data:{" + key + "}:tokens";
	}

}
