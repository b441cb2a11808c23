package dev.distlock.redis.internal.script;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts of read-write locks ({@code LockMode.READ} and {@code WRITE}), each one round trip, atomic on the server.
 * <p>
 * Data model: the lease is one hash, {@code <prefix>:{<key>}}, as for an exclusive lock, so that Cluster hash tags, the
 * holder query and the forced release work alike, and a free lock leaves nothing behind. Its fields:
 * <ul>
 * <li>{@code ~m}: {@code w} while a writer holds it, else {@code r}; its presence marks a read-write lease (an
 * exclusive lease on the same key has none, and the scripts then treat it as held by another);</li>
 * <li>{@code ~x}: the writer's owner id, while a writer holds it;</li>
 * <li>{@code ~t}: the fencing token (see below);</li>
 * <li>{@code <owner>}: the hold count of each holder, the writer and every reader (owner ids are fresh per
 * acquisition, so a writer's downgrade is a reader with an owner id of its own);</li>
 * <li>{@code ~e:<owner>}: that holder's deadline, the server's clock in ms: each holder's lease ends on its own, so a
 * dead reader stops counting at its ttl while others renew theirs; every script that looks at the holders first
 * drops those whose deadline passed;</li>
 * <li>{@code ~q:<owner>}: a writer that waits, until the deadline it holds (refreshed by each of its attempts): while a
 * live one exists, new readers are refused, so a stream of readers cannot starve a writer, and the note of a writer
 * that died ends by itself;</li>
 * <li>{@code ~w:<client id>}: a process with a caller (reader or writer) that failed to acquire and waits for a release
 * message, as on an exclusive lease; a release that frees the lock publishes only when the lease holds one (or a
 * waiting writer's note), and its message wakes every waiter of a process;</li>
 * <li>{@code ~a:<owner>}: the call id of that holder's last {@code add} extension;</li>
 * <li>{@code ~l:<owner>}: that holder's label ({@link LockScripts#LABEL_PREFIX}), written with its hold by the
 * acquisition that creates it and removed with it (a release, a discard, or the pruning of an expired hold, which
 * also drops a label whose hold is gone), so that a read lock that overlapping readers hold forever keeps one label
 * per live reader, not one per reader that ever came.</li>
 * </ul>
 * The key's expiry is kept at the latest deadline, and the key is deleted once no holder and no note is live.
 * <p>
 * Tokens: every new writer sets {@code ~t} to {@code max(previous + 1, TIME in µs)}, so tokens grow with every
 * writer, also across a free lock. Readers share the token of the read phase they join: the first reader after a free
 * lock or a writer's end starts a phase with a new token in the same way; a writer's downgrade keeps its token. A
 * reader's token therefore names the last state written before its read, never more than the next writer's.
 * <p>
 * Release messages on the lock's channel start with {@code *}: the lock may admit several waiters at once (all the
 * waiting readers), so they wake every waiter of a process, not one.
 */
public final class ReadWriteScripts {

	/** The first character of a read-write release message: wake every waiter of the channel. */
	public static final String WAKE_ALL = "*";

	/**
	 * Shared Lua: the clock, the parse of the hash, the removal of holders and notes whose deadline passed, the expiry
	 * at the latest deadline (or the delete when nothing live is left), and the publish of a release.
	 */
	private static final String COMMON = LockScripts.PRELUDE + """
			local k = KEYS[1]
			local clock = redis.call('time')
			local nowus = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
			local now = math.floor(nowus / 1000)
			local function load()
			  local f = redis.call('hgetall', k)
			  local s = {exists = #f > 0, existed = #f > 0, holds = {}, dl = {}, q = {}, lb = {}}
			  for i = 1, #f, 2 do
			    local name, v = f[i], f[i + 1]
			    if string.sub(name, 1, 1) ~= '~' then s.holds[name] = tonumber(v)
			    elseif name == '~m' then s.m = v
			    elseif name == '~x' then s.x = v
			    elseif name == '~t' then s.t = tonumber(v)
			    elseif name == '~u' then s.u = true
			    else
			      local p = string.sub(name, 1, 3)
			      if p == '~e:' then s.dl[string.sub(name, 4)] = tonumber(v)
			      elseif p == '~l:' then s.lb[string.sub(name, 4)] = true
			      elseif p == '~q:' then s.q[string.sub(name, 4)] = tonumber(v)
			      elseif p == '~w:' then s.noted = true end
			    end
			  end
			  return s
			end
			local function prune(s)
			  local gone = {}
			  for o in pairs(s.holds) do
			    local d = s.dl[o]
			    if d == nil or d < now then
			      s.holds[o] = nil
			      gone[#gone + 1] = o
			    end
			  end
			  for o in pairs(s.dl) do
			    if s.holds[o] == nil then
			      s.dl[o] = nil
			      gone[#gone + 1] = '~e:' .. o
			    end
			  end
			  for o in pairs(s.lb) do
			    if s.holds[o] == nil then
			      s.lb[o] = nil
			      gone[#gone + 1] = '~l:' .. o
			    end
			  end
			  for o, d in pairs(s.q) do
			    if d < now then
			      s.q[o] = nil
			      gone[#gone + 1] = '~q:' .. o
			    end
			  end
			  if s.x and s.holds[s.x] == nil then
			    s.x = nil
			    gone[#gone + 1] = '~x'
			    if next(s.holds) ~= nil then redis.call('hset', k, '~m', 'r') end
			  end
			  if #gone > 0 then redis.call('hdel', k, unpack(gone)) end
			end
			local function settle(s)
			  local last, count = 0, 0
			  for o in pairs(s.holds) do
			    count = count + 1
			    if s.dl[o] > last then last = s.dl[o] end
			  end
			  for _, d in pairs(s.q) do
			    if d > last then last = d end
			  end
			  if last <= now then
			    if s.exists then redis.call('del', k) end
			    return 0
			  end
			  local failed = expire(k, last - now, not s.existed)
			  if failed then
			    error(failed.err)
			  end
			  return count
			end
			local function announce(channel, sharded, body)
			  local sent
			  if sharded == 's' then sent = redis.pcall('spublish', channel, body) end
			  if sharded ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
			    sent = redis.pcall('publish', channel, body)
			  end
			  if type(sent) == 'table' and sent.err then return sent.err end
			  return nil
			end
			""";

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] ttl ms, ARGV[3] {@code r} or {@code w}, ARGV[4] the token of the hold the
	 * caller re-enters or '' for a new acquisition, ARGV[5] and ARGV[6] for a reader: the owner id and token of the
	 * write lease its {@code LockOwner} holds (a downgrade), else '', ARGV[7] for a writer that will wait: how long its
	 * note lasts in ms, else '', ARGV[8] for a re-entry the hold count it is to reach (as for
	 * {@link LockScripts#ACQUIRE}), ARGV[9] '1' when a caller that is refused will wait for a release message (its
	 * process is then noted, {@code ~w:<client id>}, the owner id's first part), ARGV[10] {@value LockScripts#SHARDED}
	 * when releases are announced with {@code SPUBLISH}, else empty or absent, ARGV[11] for a new acquisition the
	 * holder's label, written with the hold it creates ('' or absent: none). Returns {holds, token} when acquired or
	 * re-entered, {0, ms after which to try again} when refused, {-1, 0} when a re-entry finds its hold gone. A new
	 * writer whose user may not announce its release is noted as such ({@value LockScripts#UNANNOUNCED_FIELD}, as for
	 * {@link LockScripts#ACQUIRE}), and a reader it keeps out gets a third element, 1, so that it polls instead of
	 * waiting for the writer's lease time (a refused writer retries within a third of its note's life anyway).
	 * <p>
	 * A reader is refused while another owner writes (unless it is that writer's downgrade) and, as a new reader, while
	 * a writer waits; a writer is refused while anyone else holds the lock, and then notes that it waits. A hold of the
	 * caller's owner id that the caller does not re-enter comes from an earlier attempt of the same acquisition whose
	 * reply was lost: it is adopted (one hold, its label written again, the same). A re-entry never creates a hold,
	 * nor shortens one, nor writes a label.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> ACQUIRE = RedisScript.of(COMMON + LockScripts.UNANNOUNCED + """
			local s = load()
			if s.exists and s.m == nil then
			  if ARGV[4] ~= '' then return {-1, 0} end
			  return {0, redis.call('pttl', k)}
			end
			prune(s)
			local o, ttl = ARGV[1], tonumber(ARGV[2])
			if ARGV[4] ~= '' then
			  if s.holds[o] and s.t == tonumber(ARGV[4]) then
			    local c = s.holds[o]
			    local target = tonumber(ARGV[8] or '') or (c + 1)
			    if c < target then
			      c = target
			      redis.call('hset', k, o, n(c))
			    end
			    if s.dl[o] < now + ttl then
			      s.dl[o] = now + ttl
			      redis.call('hset', k, '~e:' .. o, n(now + ttl))
			    end
			    settle(s)
			    return {c, s.t}
			  end
			  settle(s)
			  return {-1, 0}
			end
			if ARGV[3] == 'w' then
			  for h in pairs(s.holds) do
			    if h ~= o then
			      local wait = 1000
			      if ARGV[9] == '1' then redis.call('hsetnx', k, '~w:' .. string.match(o, '^[^:]*'), 1) end
			      if ARGV[7] ~= '' then
			        local note = tonumber(ARGV[7])
			        s.q[o] = now + note
			        redis.call('hset', k, '~q:' .. o, n(now + note))
			        wait = math.max(1, math.floor(note / 3))
			      end
			      settle(s)
			      return {0, math.max(1, math.min(wait, redis.call('pttl', k)))}
			    end
			  end
			  local token = math.max((s.t or 0) + 1, nowus)
			  s.holds[o], s.dl[o], s.x, s.t, s.q[o] = 1, now + ttl, o, token, nil
			  redis.call('hdel', k, '~q:' .. o)
			  redis.call('hset', k, o, 1, '~e:' .. o, n(now + ttl), '~x', o, '~m', 'w', '~t', n(token))
			  if ARGV[11] and ARGV[11] ~= '' then redis.call('hset', k, '~l:' .. o, ARGV[11]) end
			  if unannounced(k, ARGV[10]) then
			    redis.call('hset', k, '~u', 1)
			  elseif s.u then
			    redis.call('hdel', k, '~u')
			  end
			  s.exists = true
			  settle(s)
			  return {1, token}
			end
			local blocked
			if s.holds[o] == nil then
			  if s.x and not (s.x == ARGV[5] and s.t == tonumber(ARGV[6])) then
			    blocked = s.dl[s.x]
			  elseif ARGV[5] == '' then
			    for _, d in pairs(s.q) do blocked = math.max(blocked or 0, d) end
			  end
			end
			if blocked then
			  if ARGV[9] == '1' then redis.call('hsetnx', k, '~w:' .. string.match(o, '^[^:]*'), 1) end
			  settle(s)
			  if s.x and s.u then
			    return {0, math.max(1, blocked - now), 1}
			  end
			  return {0, math.max(1, blocked - now)}
			end
			local token = s.t
			if next(s.holds) == nil then token = math.max((s.t or 0) + 1, nowus) end
			s.holds[o], s.dl[o], s.t = 1, now + ttl, token
			local mode = 'r'
			if s.x then mode = 'w' end
			redis.call('hset', k, o, 1, '~e:' .. o, n(now + ttl), '~m', mode, '~t', n(token))
			if ARGV[11] and ARGV[11] ~= '' then redis.call('hset', k, '~l:' .. o, ARGV[11]) end
			s.exists = true
			settle(s)
			return {1, token}
			""", List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] release channel, ARGV[4] {@value LockScripts#SHARDED} or ''
	 * (as for {@link LockScripts#RELEASE}), ARGV[5] the holds the owner counts before this release, ARGV[6] how long the
	 * receipt of a last release lasts in ms. Returns {-1, ''} when the hold is not ours (gone, or its deadline passed),
	 * else {holds left, message}: at zero the owner's hold ends, and when that frees the lock for others (no holder left,
	 * or the writer gone while its downgrade reads on) the message is the second element ('' when the lock is not free
	 * for others): it is published when a process noted that it waits ({@code ~w:}) or a writer waits ({@code ~q:}), and
	 * the releasing process wakes its own waiters with it either way. A refused publish appends Redis's error as a third element; the release stands.
	 * Run twice, it answers as the first run did (as {@link LockScripts#RELEASE}: the count goes down only while Redis
	 * counts the holds the owner counted before, and a last release leaves the receipt {@code <lease>:r:<owner>} =
	 * {@code <token>:<message>}).
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RELEASE = RedisScript.of(COMMON + """
			local s = load()
			local o = ARGV[1]
			local receipt = k .. ':r:' .. o
			if s.m ~= nil then prune(s) end
			if s.m == nil or s.holds[o] == nil or s.t ~= tonumber(ARGV[2]) then
			  if s.m ~= nil then settle(s) end
			  local done = redis.call('get', receipt)
			  if done and string.sub(done, 1, #ARGV[2] + 1) == ARGV[2] .. ':' then
			    return {0, string.sub(done, #ARGV[2] + 2)}
			  end
			  return {-1, ''}
			end
			if s.holds[o] < tonumber(ARGV[5] or '1') then return {s.holds[o], ''} end
			if s.holds[o] > 1 then return {redis.call('hincrby', k, o, -1), ''} end
			local ms = ARGV[6] or '1000'
			redis.call('set', receipt, ARGV[2] .. ':', 'px', ms)
			s.holds[o], s.dl[o], s.lb[o] = nil, nil, nil
			local writer = s.x == o
			if writer then
			  s.x = nil
			  redis.call('hdel', k, o, '~e:' .. o, '~a:' .. o, '~l:' .. o, '~x')
			else
			  redis.call('hdel', k, o, '~e:' .. o, '~a:' .. o, '~l:' .. o)
			end
			local left = settle(s)
			if writer and left > 0 then redis.call('hset', k, '~m', 'r') end
			if left > 0 and not writer then return {0, ''} end
			local body = '*' .. string.format('%d', nowus)
			redis.call('set', receipt, ARGV[2] .. ':' .. body, 'px', ms)
			if not s.noted and next(s.q) == nil then return {0, body} end
			local err = announce(ARGV[3], ARGV[4], body)
			if err then return {0, body, err} end
			return {0, body}
			""", List.class);

	/**
	 * KEYS[1..n] leases; ARGV[3i-2..3i] owner, token, ttl ms of KEYS[i], as {@link LockScripts#RENEW_ALL}. For each
	 * returns 1 when the hold is still ours (its deadline raised to at least now + ttl, the key's expiry to at least that
	 * deadline) or 0 when it is gone or its deadline passed. One HMGET a lease: no scan of the other holders.
	 */
	@SuppressWarnings("rawtypes")
	public static final RedisScript<List> RENEW_ALL = RedisScript.of("""
			local clock = redis.call('time')
			local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
			local result = {}
			for i = 1, #KEYS do
			  local k = KEYS[i]
			  local a = 3 * i - 2
			  local held = redis.call('hmget', k, ARGV[a], '~t', '~e:' .. ARGV[a])
			  if held[1] and tonumber(held[2]) == tonumber(ARGV[a + 1]) and tonumber(held[3] or '0') >= now then
			    local ttl = tonumber(ARGV[a + 2])
			    if tonumber(held[3]) < now + ttl then
			      redis.call('hset', k, '~e:' .. ARGV[a], string.format('%d', now + ttl))
			    end
			    if redis.call('pttl', k) < ttl then
			      redis.call('pexpire', k, ARGV[a + 2])
			    end
			    result[i] = 1
			  else
			    result[i] = 0
			  end
			end
			return result
			""", List.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] token, ARGV[3] ms, ARGV[4] {@code set} or {@code add}, ARGV[5] for
	 * {@code add} a call id, as {@link LockScripts#EXTEND} for this holder's own deadline (the call id noted in
	 * {@code ~a:<owner>}, so that a second run adds nothing). Returns the new remaining ms of the hold, -1 when it is not
	 * ours.
	 */
	public static final RedisScript<Long> EXTEND = RedisScript.of(COMMON + """
			local s = load()
			if s.m == nil then return -1 end
			prune(s)
			local o = ARGV[1]
			if s.holds[o] == nil or s.t ~= tonumber(ARGV[2]) then
			  settle(s)
			  return -1
			end
			local d = now + tonumber(ARGV[3])
			if ARGV[4] == 'add' then
			  local call = ARGV[5] or ''
			  if call ~= '' and redis.call('hget', k, '~a:' .. o) == call then
			    return s.dl[o] - now
			  end
			  d = math.min(s.dl[o] + tonumber(ARGV[3]), now + 31536000000)
			  if call ~= '' then redis.call('hset', k, '~a:' .. o, call) end
			end
			s.dl[o] = d
			redis.call('hset', k, '~e:' .. o, n(d))
			settle(s)
			return d - now
			""", Long.class);

	/** KEYS[1] lease; ARGV[1] owner, ARGV[2] token. The remaining ms of the hold when it is still ours, else -1. */
	public static final RedisScript<Long> OWNED = RedisScript.of("""
			local clock = redis.call('time')
			local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
			local held = redis.call('hmget', KEYS[1], ARGV[1], '~t', '~e:' .. ARGV[1])
			if held[1] and tonumber(held[2]) == tonumber(ARGV[2]) and tonumber(held[3] or '0') >= now then
			  return tonumber(held[3]) - now
			end
			return -1
			""", Long.class);

	/**
	 * KEYS[1] lease; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@value LockScripts#SHARDED} or ''. The discard
	 * of both kinds of lease, for holds the client does not know about (those a script created after the client gave
	 * up on its reply); safe at any time because an owner id is never used again once its acquisition failed or its
	 * lease ended. On an exclusive lease it deletes the lease if {@code owner} holds it, whatever its hold count and
	 * token, and publishes the release (a refused publish does not undo the delete); on a read-write lease it removes only this owner's hold and waiting-writer note, never other readers' holds, and
	 * publishes when that frees the lock for others (as RELEASE) or removes a note that held readers back. Returns 1
	 * when a hold was deleted, else 0.
	 */
	public static final RedisScript<Long> DISCARD = RedisScript.of(COMMON + """
			local o = ARGV[1]
			local v = redis.call('hmget', k, '~m', o, '~t', '~q:' .. o)
			if not v[1] then
			  if not v[2] then return 0 end
			  redis.call('del', k)
			  announce(ARGV[2], ARGV[3], v[3])
			  return 1
			end
			if not v[2] and not v[4] then return 0 end
			local s = load()
			prune(s)
			local writer = s.x == o
			s.holds[o], s.dl[o], s.q[o], s.lb[o] = nil, nil, nil, nil
			redis.call('hdel', k, o, '~e:' .. o, '~q:' .. o, '~a:' .. o, '~l:' .. o)
			if writer then
			  s.x = nil
			  redis.call('hdel', k, '~x')
			end
			local left = settle(s)
			if writer and left > 0 then redis.call('hset', k, '~m', 'r') end
			if left == 0 or writer or v[4] then announce(ARGV[2], ARGV[3], '*' .. n(nowus)) end
			if v[2] then return 1 end
			return 0
			""", Long.class);

	private ReadWriteScripts() {
	}

}
