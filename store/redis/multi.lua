-- multi.lua: several takes decided as one, after prelude.lua and every
-- algorithm's file: the function both onemulti.lua (an AllowAll sent
-- alone) and batch.lua (an AllowAll in a batch) decide them with, after
-- algorithms.lua. Mirrors Store.AllowAll in store/memory/multi.go.

-- olds and oldms hold the state (false: none) and expiry each take of
-- multi found before it wrote, to put back if a take is denied; olds[c] is
-- nil for a take that wrote nothing.
local olds, oldms = {}, {}

-- multi decides takes kb + 1 .. kb + k at now, all or nothing, in the
-- layout batch.lua reads them in, so that a take of an AllowAll costs what
-- a lone take does: take i is the key keys[i] and the cost
-- args[nfirst + nstride(i - 1)] (the script's ARGV, node.lua's for a node
-- batch) under limit j = which[i], decided by
-- decides[j] (nil: a sliding log, on its ZSET) with rates[j],
-- capacities[j] and periods[j], numbers; values[key] is the state of a
-- GET-based key (false: none). Each take of a GET-based key is decided and
-- written to values[key] and expiry[key] (ms), key appended to order the
-- first time, as a lone take's is, and what it found kept aside; a sliding
-- log's is decided without writing. If every take is allowed, the logs'
-- are committed on their ZSETs and multi returns true, leaving the others'
-- for the caller to write. Else what the takes wrote is put back and
-- multi returns false. It fills out from o + 1, four integers per take: if
-- all are allowed, their decisions; else nothing is taken, allowed says
-- whether the take alone would pass, retry-after is set for those that
-- would not, and remaining and reset-after describe the budget as it is.
local function multi(k, kb, keys, which, args, nfirst, nstride, decides, rates, capacities, periods, values, expiry, order, now, slack, out, o)
  local all, logs, mark = true, false, #order
  for c = 1, k do
    local i, r = kb + c, o + 4 * (c - 1)
    local j, key = which[i], keys[i]
    local decide = decides[j]
    local n = tonumber(args[nfirst + nstride * (i - 1)])
    if decide then
      local v, nv, ms = values[key]
      out[r + 1], out[r + 2], out[r + 3], out[r + 4], nv, ms =
        decide(v, rates[j], capacities[j], n, periods[j], now, slack)
      if nv then
        local was = expiry[key]
        if not was then
          order[#order + 1] = key
        end
        olds[c], oldms[c] = v, was
        values[key], expiry[key] = nv, ms
      else
        olds[c] = nil
      end
    else
      olds[c] = nil
      logs = true
      local x = slidinglog(key, rates[j], capacities[j], n, periods[j], now, slack, false)
      out[r + 1], out[r + 2], out[r + 3], out[r + 4] = x[1], x[2], x[3], x[4]
    end
    if out[r + 1] ~= 1 then
      all = false
    end
  end
  if all then
    if logs then
      for c = 1, k do
        local i = kb + c
        local j = which[i]
        if not decides[j] then
          local r = o + 4 * (c - 1)
          local x = slidinglog(keys[i], rates[j], capacities[j], tonumber(args[nfirst + nstride * (i - 1)]), periods[j], now, slack, true)
          out[r + 2], out[r + 3], out[r + 4] = x[2], x[3], x[4]
        end
      end
    end
    return true
  end
  -- nothing is taken: what the allowed takes wrote is put back (a take
  -- that wrote nothing kept nothing aside), then the budgets as they are,
  -- with each take's own verdict
  for c = 1, k do
    if olds[c] ~= nil then
      local key = keys[kb + c]
      values[key], expiry[key] = olds[c], oldms[c]
    end
  end
  for w = #order, mark + 1, -1 do
    order[w] = nil
  end
  for c = 1, k do
    local i, r = kb + c, o + 4 * (c - 1)
    local j, key = which[i], keys[i]
    local decide = decides[j]
    if decide then
      local _
      _, out[r + 2], _, out[r + 4] = decide(values[key], rates[j], capacities[j], 0, periods[j], now, slack)
    else
      local x = slidinglog(key, rates[j], capacities[j], 0, periods[j], now, slack, false)
      out[r + 2], out[r + 4] = x[2], x[4]
    end
  end
  return false
end
