-- ListingScripts.DESCRIBE, after labels.lua: reads one lease of any kind for the store listing. Its keys, arguments
-- and reply: the Javadoc of ListingScripts.DESCRIBE. The comment lines at the top of this file, and the empty line
-- after them, are not part of the script (LuaSource drops them).

local fields = redis.call('hgetall', KEYS[1])
local holds, token, mode, waiting = 0, 0, '', 0
for i = 1, #fields, 2 do
  local field = fields[i]
  if field == '~t' then
    token = tonumber(fields[i + 1]) or 0
  elseif field == '~m' then
    mode = fields[i + 1]
  elseif field == '~p' then
    mode = 'p'
  elseif string.sub(field, 1, 3) == '~w:' then
    waiting = waiting + 1
  elseif string.sub(field, 1, 1) ~= '~' then
    holds = holds + (tonumber(fields[i + 1]) or 0)
  end
end
if holds < 1 then
  return {}
end
local queue = redis.pcall('zcard', KEYS[2])
if type(queue) ~= 'number' then
  queue = -1
end
return {holds, token, redis.call('pttl', KEYS[1]), mode, queue, waiting, labels(fields)}
