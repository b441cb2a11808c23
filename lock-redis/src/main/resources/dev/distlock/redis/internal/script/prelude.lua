-- LockScripts.PRELUDE: n(x), a number as an integer string, and expire(key, ms, created, undo), an expiry Redis may
-- refuse. Its keys, arguments and reply: the Javadoc of LockScripts.PRELUDE. The comment lines at the top of this
-- file, and the empty line after them, are not part of the script (LuaSource drops them).

local function n(x)
  return string.format('%d', x)
end
local function expire(key, ms, created, undo)
  local r = redis.pcall('pexpire', key, n(ms))
  if type(r) == 'table' and r.err then
    if created then
      redis.pcall('del', key)
    end
    if undo then
      undo()
    end
    redis.call('pexpire', key, n(ms))
    return r
  end
  return nil
end
