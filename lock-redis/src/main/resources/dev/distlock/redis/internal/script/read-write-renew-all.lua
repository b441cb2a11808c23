-- ReadWriteScripts.RENEW_ALL: renews a batch of read and write holds, and of permits (each checked against its own
-- token, '~k:'), that are still their owners'. Its keys, arguments and reply: the Javadoc of
-- ReadWriteScripts.RENEW_ALL. The comment lines at the top of this file, and the empty line after them, are not part of
-- the script (LuaSource drops them).

local clock = redis.call('time')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local result = {}
for i = 1, #KEYS do
  local k = KEYS[i]
  local a = 3 * i - 2
  local held = redis.call('hmget', k, ARGV[a], '~t', '~e:' .. ARGV[a], '~k:' .. ARGV[a])
  if held[1] and tonumber(held[4] or held[2]) == tonumber(ARGV[a + 1]) and tonumber(held[3] or '0') >= now then
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
