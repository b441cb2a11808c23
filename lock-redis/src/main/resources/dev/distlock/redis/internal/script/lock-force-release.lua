-- LockScripts.FORCE_RELEASE: an operator's override: deletes a lease whoever holds it, with a receipt, and wakes its
-- waiters. Its keys, arguments and reply: the Javadoc of LockScripts.FORCE_RELEASE. The comment lines at the top of
-- this file, and the empty line after them, are not part of the script (LuaSource drops them).

local receipt = KEYS[1] .. ':f:' .. (ARGV[3] or '')
if ARGV[3] and ARGV[3] ~= '' and redis.call('exists', receipt) == 1 then
  return redis.call('hgetall', receipt)
end
local fields = redis.call('hgetall', KEYS[1])
if #fields == 0 then
  return {}
end
if ARGV[3] and ARGV[3] ~= '' then
  redis.call('hset', receipt, unpack(fields))
  redis.call('pexpire', receipt, ARGV[4])
end
redis.call('del', KEYS[1])
local stamp = redis.call('time')[1]
for i = 1, #fields, 2 do
  if fields[i] == '~m' or fields[i] == '~p' then
    stamp = '*' .. stamp
    break
  end
end
local sent
if ARGV[2] == 's' then
  sent = redis.pcall('spublish', ARGV[1], stamp)
end
if ARGV[2] ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
  sent = redis.pcall('publish', ARGV[1], stamp)
end
if type(sent) == 'table' and sent.err then
  fields[#fields + 1] = '~!'
  fields[#fields + 1] = sent.err
end
return fields
