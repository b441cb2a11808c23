-- PermitScripts.ACQUIRE, after prelude.lua, read-write-common.lua and unannounced.lua: takes or re-enters a permit of
-- a semaphore. Its keys, arguments and reply: the Javadoc of PermitScripts.ACQUIRE. The comment lines at the top of
-- this file, and the empty line after them, are not part of the script (LuaSource drops them).

local s = load()
if s.exists and s.p == nil then
  if ARGV[4] ~= '' then return {-1, 0} end
  return {0, redis.call('pttl', k)}
end
prune(s)
local o, ttl, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if ARGV[4] ~= '' then return reenter(s, o, ttl) end
if s.holds[o] then
  settle(s)
  return {s.holds[o], s.tk[o]}
end
local count, first = 0, nil
for h in pairs(s.holds) do
  count = count + 1
  if first == nil or s.dl[h] < first then first = s.dl[h] end
end
if count > 0 and s.p ~= limit then
  settle(s)
  return {-2, s.p}
end
if count >= limit then
  if ARGV[9] == '1' then redis.call('hsetnx', k, '~w:' .. string.match(o, '^[^:]*'), 1) end
  settle(s)
  if s.u then
    return {0, math.max(1, first - now), 1}
  end
  return {0, math.max(1, first - now)}
end
local token = math.max((s.t or 0) + 1, nowus)
s.holds[o], s.dl[o], s.tk[o], s.t, s.p = 1, now + ttl, token, token, limit
redis.call('hset', k, o, 1, '~e:' .. o, n(now + ttl), '~k:' .. o, n(token), '~t', n(token), '~p', n(limit))
if ARGV[11] and ARGV[11] ~= '' then redis.call('hset', k, '~l:' .. o, ARGV[11]) end
if unannounced(k, ARGV[10]) then
  redis.call('hset', k, '~u', 1)
elseif s.u then
  redis.call('hdel', k, '~u')
end
s.exists = true
settle(s)
return {1, token}
