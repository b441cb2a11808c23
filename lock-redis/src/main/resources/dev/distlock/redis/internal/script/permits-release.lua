-- PermitScripts.RELEASE, after prelude.lua and read-write-common.lua: releases one hold of a permit, with a receipt,
-- announcing the permit given back. Its keys, arguments and reply: the Javadoc of PermitScripts.RELEASE. The comment
-- lines at the top of this file, and the empty line after them, are not part of the script (LuaSource drops them).

local s = load()
local o = ARGV[1]
local receipt = k .. ':r:' .. o
if s.p ~= nil then prune(s) end
if s.p == nil or s.holds[o] == nil or s.tk[o] ~= tonumber(ARGV[2]) then
  if s.p ~= nil then settle(s) end
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
redis.call('hdel', k, o, '~e:' .. o, '~a:' .. o, '~l:' .. o, '~k:' .. o)
settle(s)
local body = '*' .. string.format('%d', nowus)
redis.call('set', receipt, ARGV[2] .. ':' .. body, 'px', ms)
if not s.noted then return {0, body} end
local err = announce(ARGV[3], ARGV[4], body)
if err then return {0, body, err} end
return {0, body}
