-- FairScripts.FAIR_RELEASE, after prelude.lua, fair-prune.lua and fair-hand-on.lua: releases one hold; the last one
-- hands the lease to the first live queue entry. Its keys, arguments and reply: the Javadoc of
-- FairScripts.FAIR_RELEASE. The comment lines at the top of this file, and the empty line after them, are not part
-- of the script (LuaSource drops them).

local held = redis.call('hmget', KEYS[1], ARGV[1], '~t')
local receipt = KEYS[1] .. ':r:' .. ARGV[1]
if (not held[1]) or held[2] ~= ARGV[2] then
  local done = redis.call('get', receipt)
  local prefix = ARGV[2] .. ':'
  if done and string.sub(done, 1, #prefix) == prefix then
    local rest = string.sub(done, #prefix + 1)
    local colon = string.find(rest, ':', 1, true)
    return {0, tonumber(string.sub(rest, 1, colon - 1)), string.sub(rest, colon + 1)}
  end
  return {-1}
end
local count = tonumber(held[1])
if count < tonumber(ARGV[5] or '1') then
  return {count}
end
if count > 1 then
  return {redis.call('hincrby', KEYS[1], ARGV[1], -1)}
end
local ms = ARGV[6] or '1000'
redis.call('set', receipt, ARGV[2] .. ':0:', 'px', ms)
local head, token, err = handOn(tonumber(ARGV[2]), ARGV[3], ARGV[4])
if head then
  redis.call('set', receipt, ARGV[2] .. ':' .. token .. ':' .. head, 'px', ms)
end
local reply = {0, tonumber(token or '0'), head or ''}
if err then
  reply[4] = err
end
return reply
