-- LockScripts.EXTEND, after prelude.lua: sets or adds to the remaining time of an exclusive lease. Its keys,
-- arguments and reply: the Javadoc of LockScripts.EXTEND. The comment lines at the top of this file, and the empty
-- line after them, are not part of the script (LuaSource drops them).

local held = redis.call('hmget', KEYS[1], ARGV[1], '~t', '~a')
if (not held[1]) or held[2] ~= ARGV[2] then
  return -1
end
local ms = tonumber(ARGV[3])
if ARGV[4] == 'add' then
  if ARGV[5] and ARGV[5] ~= '' and held[3] == ARGV[5] then
    return math.max(redis.call('pttl', KEYS[1]), 0)
  end
  ms = math.min(ms + math.max(redis.call('pttl', KEYS[1]), 0), 31536000000)
  if ARGV[5] and ARGV[5] ~= '' then
    redis.call('hset', KEYS[1], '~a', ARGV[5])
  end
end
local failed = expire(KEYS[1], ms, false)
if failed then
  return failed
end
return ms
