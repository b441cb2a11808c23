-- FairScripts.FAIR_LEAVE, after prelude.lua, fair-prune.lua and fair-hand-on.lua: a waiter gives up: its queue entry
-- goes, and a lease handed to it meanwhile goes on. Its keys, arguments and reply: the Javadoc of
-- FairScripts.FAIR_LEAVE. The comment lines at the top of this file, and the empty line after them, are not part of
-- the script (LuaSource drops them).

unqueue(ARGV[1])
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return 0
end
handOn(tonumber(redis.call('hget', KEYS[1], '~t') or '0'), ARGV[2], ARGV[3])
return 1
