-- ReadWriteScripts.RELEASE, after prelude.lua and read-write-common.lua: releases one read or write hold, or one
-- permit of a semaphore, with a receipt, announcing a lock freed for others (every permit given back is). Its keys,
-- arguments and reply: the Javadoc of ReadWriteScripts.RELEASE. The comment lines at the top of this file, and the empty line after them, are not part
-- of the script (LuaSource drops them).

local s = load()
local o = ARGV[1]
local receipt = k .. ':r:' .. o
local shared = s.m ~= nil or s.p ~= nil
if shared then prune(s) end
if not shared or s.holds[o] == nil or token(s, o) ~= tonumber(ARGV[2]) then
  if shared then settle(s) end
  local done = redis.call('get', receipt)
  if done and string.sub(done, 1, #ARGV[2] + 1) == ARGV[2] .. ':' then
    return {0, string.sub(done, #ARGV[2] + 2)}
  end
  return {-1, ''}
end
if s.holds[o] < tonumber(ARGV[5] or '1') then return {s.holds[o], ''} end
if s.holds[o] > 1 then return {redis.call('hincrby', k, o, -1), ''} end
local ms = ARGV[6] or '1000'
redis.call('set', receipt, ARGV[2] .. ':', 'px', ms)
s.holds[o], s.dl[o], s.lb[o], s.tk[o] = nil, nil, nil, nil
local writer = s.x == o
if writer then
  s.x = nil
  redis.call('hdel', k, o, '~e:' .. o, '~a:' .. o, '~l:' .. o, '~x')
else
  redis.call('hdel', k, o, '~e:' .. o, '~a:' .. o, '~l:' .. o, '~k:' .. o)
end
local left = settle(s)
if writer and left > 0 then redis.call('hset', k, '~m', 'r') end
if left > 0 and not writer and not s.p then return {0, ''} end
local body = '*' .. string.format('%d', nowus)
redis.call('set', receipt, ARGV[2] .. ':' .. body, 'px', ms)
if not s.noted and next(s.q) == nil then return {0, body} end
local err = announce(ARGV[3], ARGV[4], body)
if err then return {0, body, err} end
return {0, body}
