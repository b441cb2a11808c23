-- FairScripts.FAIR_ACQUIRE, after prelude.lua and fair-prune.lua: takes a fair lease in queue order, else queues the
-- caller and keeps its entry alive. Its keys, arguments and reply: the Javadoc of FairScripts.FAIR_ACQUIRE. The
-- comment lines at the top of this file, and the empty line after them, are not part of the script (LuaSource drops
-- them).

if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  unqueue(ARGV[1])
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return {1, tonumber(redis.call('hget', KEYS[1], '~t'))}
end
if redis.call('exists', KEYS[1]) == 0 then
  local head = redis.call('zrange', KEYS[2], 0, 0)[1]
  if (not head) or head == ARGV[1] then
    local token = n(tonumber(t[1]) * 1000000 + tonumber(t[2]))
    unqueue(ARGV[1])
    hold(ARGV[1], token, ARGV[5])
    local failed = expire(KEYS[1], ARGV[2], true)
    if failed then
      return failed
    end
    return {1, tonumber(token)}
  end
end
local pttl = redis.call('pttl', KEYS[1])
if ARGV[4] ~= '1' then
  return {0, pttl, 0}
end
if not redis.call('zscore', KEYS[2], ARGV[1]) then
  local last = redis.call('zrange', KEYS[2], -1, -1, 'withscores')
  local ticket = 0
  if #last > 0 then
    ticket = tonumber(last[2]) + 1
  end
  redis.call('zadd', KEYS[2], n(ticket), ARGV[1])
  if ARGV[5] and ARGV[5] ~= '' then
    redis.call('hset', KEYS[4], ARGV[1], ARGV[2], '~l:' .. ARGV[1], ARGV[5])
  else
    redis.call('hset', KEYS[4], ARGV[1], ARGV[2])
  end
end
redis.call('zadd', KEYS[3], n(now + tonumber(ARGV[3])), ARGV[1])
for i = 2, 4 do
  if redis.call('pttl', KEYS[i]) < tonumber(ARGV[3]) then
    local failed = expire(KEYS[i], ARGV[3], false, function() unqueue(ARGV[1]) end)
    if failed then
      return failed
    end
  end
end
return {0, pttl, redis.call('zrank', KEYS[2], ARGV[1]) + 1}
