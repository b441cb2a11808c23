-- ReadWriteScripts.COMMON (private), after prelude.lua: the clock, load, prune, settle and announce of a read-write
-- lease, and of a semaphore of leased permits (PermitScripts: its limit '~p', each holder's token '~k:<owner>'). Its keys, arguments and reply: the Javadoc of ReadWriteScripts.COMMON. The comment lines at the top of this
-- file, and the empty line after them, are not part of the script (LuaSource drops them).

local k = KEYS[1]
local clock = redis.call('time')
local nowus = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local now = math.floor(nowus / 1000)
local function load()
  local f = redis.call('hgetall', k)
  local s = {exists = #f > 0, existed = #f > 0, holds = {}, dl = {}, q = {}, lb = {}, tk = {}}
  for i = 1, #f, 2 do
    local name, v = f[i], f[i + 1]
    if string.sub(name, 1, 1) ~= '~' then s.holds[name] = tonumber(v)
    elseif name == '~m' then s.m = v
    elseif name == '~x' then s.x = v
    elseif name == '~t' then s.t = tonumber(v)
    elseif name == '~p' then s.p = tonumber(v)
    elseif name == '~u' then s.u = true
    else
      local p = string.sub(name, 1, 3)
      if p == '~e:' then s.dl[string.sub(name, 4)] = tonumber(v)
      elseif p == '~l:' then s.lb[string.sub(name, 4)] = true
      elseif p == '~k:' then s.tk[string.sub(name, 4)] = tonumber(v)
      elseif p == '~q:' then s.q[string.sub(name, 4)] = tonumber(v)
      elseif p == '~w:' then s.noted = true end
    end
  end
  return s
end
local function token(s, o)
  if s.p then return s.tk[o] end
  return s.t
end
local function prune(s)
  local gone = {}
  for o in pairs(s.holds) do
    local d = s.dl[o]
    if d == nil or d < now then
      s.holds[o] = nil
      gone[#gone + 1] = o
    end
  end
  for o in pairs(s.dl) do
    if s.holds[o] == nil then
      s.dl[o] = nil
      gone[#gone + 1] = '~e:' .. o
    end
  end
  for o in pairs(s.lb) do
    if s.holds[o] == nil then
      s.lb[o] = nil
      gone[#gone + 1] = '~l:' .. o
    end
  end
  for o in pairs(s.tk) do
    if s.holds[o] == nil then
      s.tk[o] = nil
      gone[#gone + 1] = '~k:' .. o
    end
  end
  for o, d in pairs(s.q) do
    if d < now then
      s.q[o] = nil
      gone[#gone + 1] = '~q:' .. o
    end
  end
  if s.x and s.holds[s.x] == nil then
    s.x = nil
    gone[#gone + 1] = '~x'
    if next(s.holds) ~= nil then redis.call('hset', k, '~m', 'r') end
  end
  if #gone > 0 then redis.call('hdel', k, unpack(gone)) end
end
local function settle(s)
  local last, count = 0, 0
  for o in pairs(s.holds) do
    count = count + 1
    if s.dl[o] > last then last = s.dl[o] end
  end
  for _, d in pairs(s.q) do
    if d > last then last = d end
  end
  if last <= now then
    if s.exists then redis.call('del', k) end
    return 0
  end
  local failed = expire(k, last - now, not s.existed)
  if failed then
    error(failed.err)
  end
  return count
end
local function reenter(s, o, ttl)
  if s.holds[o] and token(s, o) == tonumber(ARGV[4]) then
    local c = s.holds[o]
    local target = tonumber(ARGV[8] or '') or (c + 1)
    if c < target then
      c = target
      redis.call('hset', k, o, n(c))
    end
    if s.dl[o] < now + ttl then
      s.dl[o] = now + ttl
      redis.call('hset', k, '~e:' .. o, n(now + ttl))
    end
    settle(s)
    return {c, token(s, o)}
  end
  settle(s)
  return {-1, 0}
end
local function announce(channel, sharded, body)
  local sent
  if sharded == 's' then sent = redis.pcall('spublish', channel, body) end
  if sharded ~= 's' or (type(sent) == 'table' and sent.err and string.find(sent.err, 'nknown')) then
    sent = redis.pcall('publish', channel, body)
  end
  if type(sent) == 'table' and sent.err then return sent.err end
  return nil
end
