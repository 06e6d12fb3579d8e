-- read.lua: how batch.lua reads the state of its GET-based keys, names,
-- when they share a slot (a single node, or one Cluster slot): one MGET.
-- Returns the values by key (false: none).
local function read(names)
  local values = {}
  if #names > 0 then
    local got = redis.call('MGET', unpack(names))
    for j = 1, #names do
      values[names[j]] = got[j]
    end
  end
  return values
end
