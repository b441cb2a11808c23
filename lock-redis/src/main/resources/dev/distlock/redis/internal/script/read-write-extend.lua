-- ReadWriteScripts.EXTEND, after prelude.lua and read-write-common.lua: sets or adds to the deadline of one read or
-- write hold, or of one permit of a semaphore (checked against its own token). Its keys, arguments and reply: the
-- Javadoc of ReadWriteScripts.EXTEND. The comment lines at the top of this file, and the empty line after them, are not
-- part of the script (LuaSource drops them).

local s = load()
if s.m == nil and s.p == nil then return -1 end
prune(s)
local o = ARGV[1]
if s.holds[o] == nil or token(s, o) ~= tonumber(ARGV[2]) then
  settle(s)
  return -1
end
local d = now + tonumber(ARGV[3])
if ARGV[4] == 'add' then
  local call = ARGV[5] or ''
  if call ~= '' and redis.call('hget', k, '~a:' .. o) == call then
    return s.dl[o] - now
  end
  d = math.min(s.dl[o] + tonumber(ARGV[3]), now + 31536000000)
  if call ~= '' then redis.call('hset', k, '~a:' .. o, call) end
end
s.dl[o] = d
redis.call('hset', k, '~e:' .. o, n(d))
settle(s)
return d - now
