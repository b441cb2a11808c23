-- LockScripts.HOLDER, after labels.lua: reads who holds a lease: holds, token, remaining time, labels. Its keys,
-- arguments and reply: the Javadoc of LockScripts.HOLDER. The comment lines at the top of this file, and the empty
-- line after them, are not part of the script (LuaSource drops them).

local fields = redis.call('hgetall', KEYS[1])
if #fields == 0 then
  return {}
end
local holds, token = 0, 0
for i = 1, #fields, 2 do
  local field = fields[i]
  if field == '~t' then
    token = tonumber(fields[i + 1])
  elseif string.sub(field, 1, 1) ~= '~' then
    holds = holds + tonumber(fields[i + 1])
  end
end
return {holds, token, redis.call('pttl', KEYS[1]), labels(fields)}
