-- FairScripts.HAND_ON (private): publish and handOn(previous, channel, sharded): gives a freed lease to the first
-- live queue entry. Its keys, arguments and reply: the Javadoc of FairScripts.HAND_ON. The comment lines at the top
-- of this file, and the empty line after them, are not part of the script (LuaSource drops them).

local function publish(channel, sharded, body)
  local sent
  if sharded == 's' then
    sent = redis.pcall('spublish', channel, body)
  end
  if sharded ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
    sent = redis.pcall('publish', channel, body)
  end
  if type(sent) == 'table' and sent.err then
    return sent.err
  end
  return nil
end
local function handOn(previous, channel, sharded)
  redis.call('del', KEYS[1])
  local head, grant
  repeat
    head = redis.call('zrange', KEYS[2], 0, 0)[1]
    if not head then
      return nil, nil, nil
    end
    grant = tonumber(redis.call('zscore', KEYS[3], head) or '0') - now
    if grant < 1 then
      unqueue(head)
    end
  until grant >= 1
  local ttl = tonumber(redis.call('hget', KEYS[4], head) or grant)
  if ttl < grant then
    grant = ttl
  end
  local token = n(math.max(previous + 1, tonumber(t[1]) * 1000000 + tonumber(t[2])))
  local label = redis.call('hget', KEYS[4], '~l:' .. head)
  unqueue(head)
  hold(head, token, label)
  local failed = expire(KEYS[1], grant, true)
  if failed then
    error(failed.err)
  end
  return head, token, publish(channel .. ':' .. string.match(head, '^[^:]*'), sharded,
    '~h:' .. token .. ':' .. head)
end
