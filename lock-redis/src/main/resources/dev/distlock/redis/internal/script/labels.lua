-- LockScripts.LABELS: labels(fields): the holders' labels of a lease, as the holder query and the listing show them.
-- Its keys, arguments and reply: the Javadoc of LockScripts.LABELS. The comment lines at the top of this file, and
-- the empty line after them, are not part of the script (LuaSource drops them).

local function labels(fields)
  local owners, named, writer = {}, {}, nil
  for i = 1, #fields, 2 do
    local field = fields[i]
    if string.sub(field, 1, 3) == '~l:' then
      named[string.sub(field, 4)] = fields[i + 1]
    elseif field == '~x' then
      writer = fields[i + 1]
    elseif string.sub(field, 1, 1) ~= '~' then
      owners[#owners + 1] = field
    end
  end
  local first, list = nil, {}
  for _, o in ipairs(owners) do
    local label = named[o]
    if label then
      if o == writer then first = label else list[#list + 1] = label end
    end
  end
  table.sort(list)
  if first then table.insert(list, 1, first) end
  if #list > 5 then
    return table.concat(list, '; ', 1, 5) .. '; and ' .. (#list - 5) .. ' more'
  end
  return table.concat(list, '; ')
end
