-- FairScripts.PRUNE (private), after prelude.lua: the clock, unqueue and hold, and the pruning of queue entries
-- whose deadline passed. Its keys, arguments and reply: the Javadoc of FairScripts.PRUNE. The comment lines at the
-- top of this file, and the empty line after them, are not part of the script (LuaSource drops them).

local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function unqueue(m)
  redis.call('zrem', KEYS[2], m)
  redis.call('zrem', KEYS[3], m)
  redis.call('hdel', KEYS[4], m, '~l:' .. m)
end
local function hold(owner, token, label)
  if label and label ~= '' then
    redis.call('hset', KEYS[1], owner, 1, '~t', token, '~l:' .. owner, label)
  else
    redis.call('hset', KEYS[1], owner, 1, '~t', token)
  end
end
for _, m in ipairs(redis.call('zrangebyscore', KEYS[3], '-inf', now)) do
  unqueue(m)
end
