package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The lease scripts, each loaded once and run with {@code EVALSHA}: one round trip per operation, atomic on the server.
 * <p>
 * Data model: the lease is a hash. Each owner's field holds its hold count; the field {@value #TOKEN_FIELD} holds the
 * lease's fencing token. The key is deleted when the last hold is released, so a free lock leaves nothing behind.
 * A new lease's token is the server's clock in microseconds: after a release or an expiry the clock has moved past
 * every token issued before, so tokens grow per key without a counter key that would never expire. Scripts that act on
 * a held lease check owner <em>and</em> token, so a stale handle can never touch a newer lease of the same owner.
 */
final class LockScripts {

	/** The hash field that holds the fencing token; owner ids never start with '~'. */
	static final String TOKEN_FIELD = "~t";

	/**
	 * The argument that makes a script announce a release with {@code SPUBLISH}, on the lease's shard of a Redis
	 * Cluster, where waiters subscribe with {@code SSUBSCRIBE} on the key's master. On Redis before 7.0, which knows no
	 * {@code SPUBLISH}, the script falls back to {@code PUBLISH}, as the subscriber falls back to {@code SUBSCRIBE} on
	 * the key's master.
	 */
	static final String SHARDED = "s";

	/** The field FORCE_RELEASE adds to its reply, followed by Redis's error text, when the publish was refused. */
	static final String PUBLISH_REFUSED_FIELD = "~!";

	/** The prefix of the hash fields that note a process waiting for the lease: {@code ~w:<client id>}. */
	static final String WAITER_PREFIX = "~w:";

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] ttl ms, ARGV[3] the caller's client id if it will wait, else '', ARGV[4]
	 * the token of the lease the caller holds and re-enters, or '' for a new acquisition. Returns {hold count, fencing
	 * token} when acquired or re-entered, {0, remaining ttl ms of the holder} when another owner holds the lock, and
	 * {-1, 0} when a re-entry finds its lease gone; a caller that will wait is then noted in the lease
	 * ({@value #WAITER_PREFIX}&lt;client id&gt;), so that the holder knows other processes wait. A re-entry never
	 * shortens the lease.
	 * <p>
	 * Owner ids are fresh per acquisition (see {@code RedisLockService}), so a hold of the owner that the caller does
	 * not re-enter can only come from an earlier attempt of the same acquisition whose reply was lost: it is adopted as
	 * a new lease (one hold, a greater token), never counted on. A re-entry counts only on the lease with the token the
	 * caller knows; it never creates a lease, so a late re-entry cannot leave a hold behind a lease that expired.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> ACQUIRE = RedisScript.of("""
			if redis.call('exists', KEYS[1]) == 0 then
			  if ARGV[4] ~= '' then
			    return {-1, 0}
			  end
			  local t = redis.call('time')
			  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
			  redis.call('hset', KEYS[1], ARGV[1], 1, '~t', token)
			  redis.call('pexpire', KEYS[1], ARGV[2])
			  return {1, token}
			end
			local held = redis.call('hmget', KEYS[1], ARGV[1], '~t')
			if held[1] then
			  if ARGV[4] == '' then
			    local t = redis.call('time')
			    local token = math.max(tonumber(held[2] or '0') + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
			    redis.call('hset', KEYS[1], ARGV[1], 1, '~t', token)
			    redis.call('pexpire', KEYS[1], ARGV[2])
			    return {1, token}
			  end
			  if held[2] ~= ARGV[4] then
			    return {-1, 0}
			  end
			  local count = redis.call('hincrby', KEYS[1], ARGV[1], 1)
			  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
			    redis.call('pexpire', KEYS[1], ARGV[2])
			  end
			  return {count, tonumber(held[2])}
			end
			if ARGV[4] ~= '' then
			  return {-1, 0}
			end
			if ARGV[3] ~= '' then
			  redis.call('hset', KEYS[1], '~w:' .. ARGV[3], 1)
			end
			return {0, redis.call('pttl', KEYS[1])}
			""", List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] release channel, ARGV[4] the owner's client id, ARGV[5]
	 * {@value #SHARDED} to announce the release with {@code SPUBLISH} on its shard (Redis Cluster), else absent or empty
	 * (see {@link #SHARDED} for Redis before 7.0). Returns
	 * {-1, 0} when the lease is not ours, otherwise {holds left, 0}; at zero holds the key is deleted, and the second
	 * element is 1 when another process had noted that it waits for the lock. One HGETALL reads token, hold count and
	 * waiter notes at once: a lease hash has a handful of fields.
	 * <p>
	 * The release is published only when the lease holds a waiter note ({@value #WAITER_PREFIX}&lt;client id&gt;, of
	 * any process, this one's included, so that the rule does not depend on how a process wakes its own waiters). Every
	 * caller that will wait for a release message notes itself with every failed attempt (ACQUIRE's ARGV[3]), and only
	 * an attempt made once its channel is subscribed counts on the message; the notes live as long as the lease (a
	 * hand-over keeps them), so a release that finds none has nobody to wake and skips the publish (measured in
	 * docs/benchmarks.md, "Cheaper scripts"). A waiter whose note went with an expired lease retries when that lease
	 * would have run out, as its last attempt told it; only a lease shortened by {@code Lease.extend} below what a
	 * waiter was told, which then expires and is taken and released by a new holder before that time, leaves that
	 * waiter asleep until then. DISCARD and FORCE_RELEASE always publish.
	 * <p>
	 * The delete comes first and the publish cannot undo it: when Redis refuses the publish (an ACL without the
	 * channel), the release has happened all the same, and the reply says so with a third element, Redis's error text
	 * ({0, others, error}), rather than failing a script whose write stays (see "Release notifications" in the fault
	 * model). A release that publishes nothing has nothing to be refused.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RELEASE = RedisScript.of("""
			local fields = redis.call('hgetall', KEYS[1])
			local token, count, noted, others = nil, 0, false, 0
			for i = 1, #fields, 2 do
			  local field = fields[i]
			  if field == '~t' then
			    token = fields[i + 1]
			  elseif field == ARGV[1] then
			    count = tonumber(fields[i + 1])
			  elseif string.sub(field, 1, 3) == '~w:' then
			    noted = true
			    if string.sub(field, 4) ~= ARGV[4] then
			      others = 1
			    end
			  end
			end
			if token ~= ARGV[2] or count < 1 then
			  return {-1, 0}
			end
			if count > 1 then
			  return {redis.call('hincrby', KEYS[1], ARGV[1], -1), 0}
			end
			redis.call('del', KEYS[1])
			if not noted then
			  return {0, 0}
			end
			local sent
			if ARGV[5] == 's' then
			  sent = redis.pcall('spublish', ARGV[3], ARGV[2])
			end
			if ARGV[5] ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
			  sent = redis.pcall('publish', ARGV[3], ARGV[2])
			end
			if type(sent) == 'table' and sent.err then
			  return {0, others, sent.err}
			end
			return {0, others}
			""", List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] next owner, ARGV[4] next owner's ttl ms. Hands a lease
	 * held once by its owner straight to another owner waiting in the same process: one round trip instead of a release,
	 * a publish and a new acquisition that waiters of other processes would race for. The new holder gets a greater
	 * token, as every new holder does; notes of waiting processes stay. Returns the new token; -1 when the lease is not ours, -2 when the owner holds it
	 * more than once (the caller then releases normally).
	 */
	static final RedisScript<Long> HAND_OVER = RedisScript.of("""
			if redis.call('hget', KEYS[1], '~t') ~= ARGV[2] then
			  return -1
			end
			local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or '0')
			if count < 1 then
			  return -1
			end
			if count > 1 then
			  return -2
			end
			local t = redis.call('time')
			local token = math.max(tonumber(ARGV[2]) + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
			redis.call('hdel', KEYS[1], ARGV[1])
			redis.call('hset', KEYS[1], ARGV[3], 1, '~t', token)
			redis.call('pexpire', KEYS[1], ARGV[4])
			return token
			""", Long.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] ms, ARGV[4] 'set' (expire in ms) or 'add' (add ms).
	 * Returns the new remaining ttl in ms, or -1 when the lease is not ours.
	 */
	static final RedisScript<Long> EXTEND = RedisScript.of("""
			if redis.call('hexists', KEYS[1], ARGV[1]) == 0 or redis.call('hget', KEYS[1], '~t') ~= ARGV[2] then
			  return -1
			end
			local ms = tonumber(ARGV[3])
			if ARGV[4] == 'add' then
			  ms = ms + math.max(redis.call('pttl', KEYS[1]), 0)
			end
			redis.call('pexpire', KEYS[1], ms)
			return ms
			""", Long.class);

	/**
	 * KEYS[1..n] leases; ARGV[3i-2..3i] owner, token, ttl ms of KEYS[i]. For each lease returns 1 when it is still
	 * ours (its expiry raised to at least ttl, never lowered, so an explicit extension survives) or 0 when it is gone.
	 * Owner and token are read with one HMGET: the server's time per lease is what bounds a renewal cycle of many
	 * leases, and three calls per lease cost about a quarter less than four.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RENEW_ALL = RedisScript.of("""
			local result = {}
			for i = 1, #KEYS do
			  local k = KEYS[i]
			  local a = 3 * i - 2
			  local held = redis.call('hmget', k, ARGV[a], '~t')
			  if held[1] and held[2] == ARGV[a + 1] then
			    local ttl = tonumber(ARGV[a + 2])
			    if redis.call('pttl', k) < ttl then
			      redis.call('pexpire', k, ttl)
			    end
			    result[i] = 1
			  else
			    result[i] = 0
			  end
			end
			return result
			""", List.class);

	/**
	 * KEYS[1] lease; ARGV[1] release channel, ARGV[2] {@value #SHARDED} or absent (as for RELEASE). An operator's
	 * override: deletes the lease whoever holds it and publishes
	 * the release so waiters wake. Returns the deleted hash as {field, value, ...}, empty when there was no lease;
	 * when Redis refused the publish, the deleted hash is followed by the field {@value #PUBLISH_REFUSED_FIELD} and
	 * Redis's error text (the delete stands).
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> FORCE_RELEASE = RedisScript.of("""
			local fields = redis.call('hgetall', KEYS[1])
			if #fields == 0 then
			  return {}
			end
			redis.call('del', KEYS[1])
			local stamp = redis.call('time')[1]
			local sent
			if ARGV[2] == 's' then
			  sent = redis.pcall('spublish', ARGV[1], stamp)
			end
			if ARGV[2] ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
			  sent = redis.pcall('publish', ARGV[1], stamp)
			end
			if type(sent) == 'table' and sent.err then
			  fields[#fields + 1] = '~!'
			  fields[#fields + 1] = sent.err
			end
			return fields
			""", List.class);

	/**
	 * KEYS[1] lease. Reads who holds it, for {@code LockService.holder}: {holds, fencing token, remaining ttl ms}, the
	 * holds summed over the owner fields (waiter notes and the token start with '~'), or empty when the key is free.
	 * Reads only.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> HOLDER = RedisScript.of("""
			local fields = redis.call('hgetall', KEYS[1])
			if #fields == 0 then
			  return {}
			end
			local holds, token = 0, 0
			for i = 1, #fields, 2 do
			  local field = fields[i]
			  if field == '~t' then
			    token = tonumber(fields[i + 1])
			  elseif string.sub(field, 1, 1) ~= '~' then
			    holds = holds + tonumber(fields[i + 1])
			  end
			end
			return {holds, token, redis.call('pttl', KEYS[1])}
			""", List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token. For {@code Lease.isOwned}: the remaining ttl in ms when the lease is
	 * still this owner's with this token, else -1. Reads only.
	 */
	static final RedisScript<Long> OWNED = RedisScript.of("""
			local held = redis.call('hmget', KEYS[1], ARGV[1], '~t')
			if held[1] and held[2] == ARGV[2] then
			  return redis.call('pttl', KEYS[1])
			end
			return -1
			""", Long.class);

	private LockScripts() {
	}

}
