-- LockScripts.ACQUIRE, after prelude.lua and unannounced.lua: takes, adopts or re-enters an exclusive lease. Its
-- keys, arguments and reply: the Javadoc of LockScripts.ACQUIRE. The comment lines at the top of this file, and the
-- empty line after them, are not part of the script (LuaSource drops them).

local function hold(token)
  if ARGV[7] and ARGV[7] ~= '' then
    redis.call('hset', KEYS[1], ARGV[1], 1, '~t', token, '~l:' .. ARGV[1], ARGV[7])
  else
    redis.call('hset', KEYS[1], ARGV[1], 1, '~t', token)
  end
  if unannounced(KEYS[1], ARGV[6]) then
    redis.call('hset', KEYS[1], '~u', 1)
  end
end
local function carry()
  local own = string.match(ARGV[1], '^[^:]*')
  for id, since in string.gmatch(ARGV[9], '([^,=]+)=(%d+)') do
    if id ~= own then
      local noted = tonumber(redis.call('hget', KEYS[1], '~w:' .. id) or '')
      since = tonumber(since)
      if since > 1 and (not noted or noted > since) then
        redis.call('hset', KEYS[1], '~w:' .. id, n(since))
      end
    end
  end
end
if redis.call('exists', KEYS[1]) == 0 then
  if ARGV[4] ~= '' then
    return {-1, 0}
  end
  local t = redis.call('time')
  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
  hold(n(token))
  if ARGV[9] then
    carry()
  end
  if type(redis.pcall('pexpire', KEYS[1], ARGV[2])) == 'table' then
    local failed = expire(KEYS[1], ARGV[2], true)
    if failed then
      return failed
    end
  end
  return {1, token}
end
local held = redis.call('hmget', KEYS[1], ARGV[1], '~t', '~u')
if held[1] then
  if ARGV[4] == '' then
    local t = redis.call('time')
    local token = n(math.max(tonumber(held[2] or '0') + 1, tonumber(t[1]) * 1000000 + tonumber(t[2])))
    hold(token)
    local failed = expire(KEYS[1], ARGV[2], false)
    if failed then
      return failed
    end
    return {1, tonumber(token)}
  end
  if held[2] ~= ARGV[4] then
    return {-1, 0}
  end
  local count = tonumber(held[1])
  local target = tonumber(ARGV[5] or '') or (count + 1)
  if count < target then
    count = target
    redis.call('hset', KEYS[1], ARGV[1], n(count))
  end
  if redis.call('pttl', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
  end
  return {count, tonumber(held[2])}
end
if ARGV[4] ~= '' then
  return {-1, 0}
end
if ARGV[3] ~= '' then
  local t = redis.call('time')
  local since = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - (tonumber(ARGV[8] or '') or 0)
  local noted = tonumber(redis.call('hget', KEYS[1], '~w:' .. ARGV[3]) or '')
  if not noted or noted > since then
    redis.call('hset', KEYS[1], '~w:' .. ARGV[3], n(since))
  end
end
if ARGV[9] then
  carry()
end
if held[3] then
  return {0, redis.call('pttl', KEYS[1]), 1}
end
return {0, redis.call('pttl', KEYS[1])}
