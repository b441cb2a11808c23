-- LockScripts.RENEW_ALL: renews a batch of exclusive leases that are still their owners'. Its keys, arguments and
-- reply: the Javadoc of LockScripts.RENEW_ALL. The comment lines at the top of this file, and the empty line after
-- them, are not part of the script (LuaSource drops them).

local result = {}
for i = 1, #KEYS do
  local k = KEYS[i]
  local a = 3 * i - 2
  local held = redis.call('hmget', k, ARGV[a], '~t')
  if held[1] and held[2] == ARGV[a + 1] then
    if redis.call('pttl', k) < tonumber(ARGV[a + 2]) then
      redis.call('pexpire', k, ARGV[a + 2])
    end
    result[i] = 1
  else
    result[i] = 0
  end
end
return result
