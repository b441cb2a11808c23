-- LockScripts.OWNED: the remaining time of a lease while it is still the owner's with its token. Its keys, arguments
-- and reply: the Javadoc of LockScripts.OWNED. The comment lines at the top of this file, and the empty line after
-- them, are not part of the script (LuaSource drops them).

local held = redis.call('hmget', KEYS[1], ARGV[1], '~t')
if held[1] and held[2] == ARGV[2] then
  return redis.call('pttl', KEYS[1])
end
return -1
