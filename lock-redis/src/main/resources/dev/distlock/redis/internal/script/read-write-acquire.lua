-- ReadWriteScripts.ACQUIRE, after prelude.lua, read-write-common.lua and unannounced.lua: takes or re-enters a read
-- or write hold. Its keys, arguments and reply: the Javadoc of ReadWriteScripts.ACQUIRE. The comment lines at the
-- top of this file, and the empty line after them, are not part of the script (LuaSource drops them).

local s = load()
if s.exists and s.m == nil then
  if ARGV[4] ~= '' then return {-1, 0} end
  return {0, redis.call('pttl', k)}
end
prune(s)
local o, ttl = ARGV[1], tonumber(ARGV[2])
if ARGV[4] ~= '' then return reenter(s, o, ttl) end
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
