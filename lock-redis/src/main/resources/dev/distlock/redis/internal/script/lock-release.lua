-- LockScripts.RELEASE: releases one hold of an exclusive lease, the last one with a receipt and, if anyone waits, a
-- message. Its keys, arguments and reply: the Javadoc of LockScripts.RELEASE. The comment lines at the top of this
-- file, and the empty line after them, are not part of the script (LuaSource drops them).

local fields = redis.call('hgetall', KEYS[1])
local token, count, noted, others = nil, 0, false, 0
local aged = {}
for i = 1, #fields, 2 do
  local field = fields[i]
  if field == '~t' then
    token = fields[i + 1]
  elseif field == ARGV[1] then
    count = tonumber(fields[i + 1])
  elseif string.sub(field, 1, 3) == '~w:' then
    noted = true
    if string.sub(field, 4) ~= ARGV[4] then
      others = 1
      local since = tonumber(fields[i + 1])
      if since and since > 1 then
        aged[#aged + 1] = {since, string.sub(field, 4)}
      end
    end
  end
end
local receipt = KEYS[1] .. ':r:' .. ARGV[1]
if token ~= ARGV[2] or count < 1 then
  local done = redis.call('get', receipt)
  if done and string.sub(done, 1, #ARGV[2] + 1) == ARGV[2] .. ':' then
    return {0, tonumber(string.sub(done, #ARGV[2] + 2))}
  end
  return {-1, 0}
end
if count < tonumber(ARGV[6] or '1') then
  return {count, 0}
end
if count > 1 then
  return {redis.call('hincrby', KEYS[1], ARGV[1], -1), 0}
end
redis.call('set', receipt, ARGV[2] .. ':' .. others, 'px', ARGV[7] or '1000')
redis.call('del', KEYS[1])
if not noted then
  return {0, 0}
end
local body, sent = ARGV[2], nil
if #aged > 0 then
  table.sort(aged, function(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end)
  body = ARGV[2] .. '>' .. aged[1][2]
  local carried = {}
  for i = 2, math.min(#aged, 17) do
    carried[#carried + 1] = aged[i][2] .. '=' .. string.format('%d', aged[i][1])
  end
  if #carried > 0 then
    body = body .. '>' .. table.concat(carried, ',')
  end
end
if ARGV[5] == 's' then
  sent = redis.pcall('spublish', ARGV[3], body)
end
if ARGV[5] ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
  sent = redis.pcall('publish', ARGV[3], body)
end
if type(sent) == 'table' and sent.err then
  return {0, others, sent.err}
end
return {0, others}
