-- LockScripts.UNANNOUNCED: unannounced(key, sharded): whether the user may not announce the release of a lease. Its
-- keys, arguments and reply: the Javadoc of LockScripts.UNANNOUNCED. The comment lines at the top of this file, and
-- the empty line after them, are not part of the script (LuaSource drops them).

local function unannounced(key, sharded)
  if not redis.acl_check_cmd then
    return false
  end
  local command = 'publish'
  if sharded == 's' then
    command = 'spublish'
  end
  return not redis.acl_check_cmd(command, key .. ':released', '')
end
