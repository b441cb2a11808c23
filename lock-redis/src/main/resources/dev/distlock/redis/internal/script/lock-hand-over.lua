-- LockScripts.HAND_OVER, after prelude.lua: hands a lease held once straight to another owner of the same process.
-- Its keys, arguments and reply: the Javadoc of LockScripts.HAND_OVER. The comment lines at the top of this file,
-- and the empty line after them, are not part of the script (LuaSource drops them).

local held = redis.call('hmget', KEYS[1], '~t', ARGV[1], ARGV[3])
if held[1] ~= ARGV[2] then
  if held[1] and held[3] and not held[2] then
    return tonumber(held[1])
  end
  return -1
end
local count = tonumber(held[2] or '0')
if count < 1 then
  return -1
end
if count > 1 then
  return -2
end
local t = redis.call('time')
local token = n(math.max(tonumber(ARGV[2]) + 1, tonumber(t[1]) * 1000000 + tonumber(t[2])))
redis.call('hdel', KEYS[1], ARGV[1], '~l:' .. ARGV[1])
if ARGV[5] and ARGV[5] ~= '' then
  redis.call('hset', KEYS[1], ARGV[3], 1, '~t', token, '~l:' .. ARGV[3], ARGV[5])
else
  redis.call('hset', KEYS[1], ARGV[3], 1, '~t', token)
end
local failed = expire(KEYS[1], ARGV[4], false)
if failed then
  return failed
end
return tonumber(token)
