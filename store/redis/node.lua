-- node.lua: in place of read.lua, for a batch sent to one Redis Cluster
-- master whose keys span its slots (the node script: Redis 7+, first line
-- "#!lua flags=allow-cross-slot-keys"). The keys come undeclared, in ARGV,
-- so that the call goes to the node the store chose; the script then
-- proves they are all its own before it writes anything.
-- ARGV[1]  k, the number of keys; ARGV[2] .. ARGV[k + 1] the keys (batch.lua's
--          KEYS); then batch.lua's ARGV
local KEYS, ARGV = (function(argv)
  local k = tonumber(argv[1])
  local keys, args = {}, {}
  for i = 1, k do
    keys[i] = argv[i + 1]
  end
  for i = k + 2, #argv do
    args[#args + 1] = argv[i]
  end
  return keys, args
end)(ARGV)

-- read reads the state of the GET-based keys, names, with a GET each (MGET
-- cannot span slots), and touches the others (sliding logs) with EXISTS:
-- the values by key, or nil, before anything is written, if a key is not
-- served by this node (a slot moved or migrating, a stale route), and that
-- key: the batch then runs nowhere, and the store sends it again by slot.
local function read(names, keys)
  local values = {}
  for j = 1, #names do
    local v = redis.pcall('GET', names[j])
    if type(v) == 'table' then
      return nil, names[j]
    end
    values[names[j]] = v
  end
  for i = 1, #keys do
    if values[keys[i]] == nil and type(redis.pcall('EXISTS', keys[i])) == 'table' then
      return nil, keys[i]
    end
  end
  return values
end
