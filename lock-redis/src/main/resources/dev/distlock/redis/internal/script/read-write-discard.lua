-- ReadWriteScripts.DISCARD, after prelude.lua and read-write-common.lua: removes a hold the client does not know
-- about, of any kind of lease (of a semaphore, that holder's permit only, announced). Its keys, arguments and reply:
-- the Javadoc of ReadWriteScripts.DISCARD. The comment lines at the top of this file, and the empty line after them,
-- are not part of the script (LuaSource drops them).

local o = ARGV[1]
local v = redis.call('hmget', k, '~m', o, '~t', '~q:' .. o, '~p')
if not v[1] and not v[5] then
  if not v[2] then return 0 end
  redis.call('del', k)
  announce(ARGV[2], ARGV[3], v[3])
  return 1
end
if not v[2] and not v[4] then return 0 end
local s = load()
prune(s)
local writer = s.x == o
s.holds[o], s.dl[o], s.q[o], s.lb[o], s.tk[o] = nil, nil, nil, nil, nil
redis.call('hdel', k, o, '~e:' .. o, '~q:' .. o, '~a:' .. o, '~l:' .. o, '~k:' .. o)
if writer then
  s.x = nil
  redis.call('hdel', k, '~x')
end
local left = settle(s)
if writer and left > 0 then redis.call('hset', k, '~m', 'r') end
if left == 0 or writer or v[4] or v[5] then announce(ARGV[2], ARGV[3], '*' .. n(nowus)) end
if v[2] then return 1 end
return 0
