-- ReadWriteScripts.OWNED: the remaining time of a read or write hold, or of a permit (its own token, '~k:'), while it
-- is still the owner's. Its keys, arguments and reply: the Javadoc of ReadWriteScripts.OWNED. The comment lines at the
-- top of this file, and the empty line after them, are not part of the script (LuaSource drops them).

local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local held = redis.call('hmget', KEYS[1], ARGV[1], '~t', '~e:' .. ARGV[1], '~k:' .. ARGV[1])
if held[1] and tonumber(held[4] or held[2]) == tonumber(ARGV[2]) and tonumber(held[3] or '0') >= now then
  return tonumber(held[3]) - now
end
return -1
