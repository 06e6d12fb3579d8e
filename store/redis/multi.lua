-- multi.lua: several takes decided as one, after prelude.lua and every
-- algorithm's file: the function both onemulti.lua (an AllowAll sent
-- alone) and batch.lua (an AllowAll in a batch) decide them with, after
-- algorithms.lua. Mirrors Store.AllowAll in store/memory/multi.go.

-- nvs and mss hold multi's values and expiries to write until it knows
-- whether every take passes (entries past the AllowAll's k are stale).
local nvs, mss = {}, {}

-- multi decides takes kb + 1 .. kb + k at now, all or nothing, in the
-- layout batch.lua reads them in, so that a take of an AllowAll costs what
-- a lone take does: take i is the key keys[i] and the cost ns[i] under
-- limit j = which[i], decided by decides[j] (nil: a sliding log, on its
-- ZSET) with rates[j], capacities[j] and periods[j], numbers; values[key]
-- is the state of a GET-based key (false: none). Every take is decided
-- writing nothing; then, only if every one is allowed, they are all
-- committed: a sliding log's on its ZSET at once, the others' as
-- values[key] and expiry[key] (ms), key appended to order the first time,
-- for the caller to write; multi then returns true. It fills out from
-- o + 1, four integers per take: if all are allowed, their decisions; else
-- nothing is taken (multi returns false), allowed says whether the take
-- alone would pass, retry-after is set for those that would not, and
-- remaining and reset-after describe the budget as it is.
local function multi(k, kb, keys, which, ns, decides, rates, capacities, periods, values, expiry, order, now, slack, out, o)
  local all, logs = true, false
  for c = 1, k do
    local i, r = kb + c, o + 4 * (c - 1)
    local j, key = which[i], keys[i]
    local decide = decides[j]
    if decide then
      out[r + 1], out[r + 2], out[r + 3], out[r + 4], nvs[c], mss[c] =
        decide(values[key], rates[j], capacities[j], ns[i], periods[j], now, slack)
    else
      logs = true
      local x = slidinglog(key, rates[j], capacities[j], ns[i], periods[j], now, slack, false)
      out[r + 1], out[r + 2], out[r + 3], out[r + 4] = x[1], x[2], x[3], x[4]
      nvs[c] = nil
    end
    if out[r + 1] ~= 1 then
      all = false
    end
  end
  if all then
    for c = 1, k do
      local i = kb + c
      local key, nv = keys[i], nvs[c]
      if nv then
        if not expiry[key] then
          order[#order + 1] = key
        end
        values[key], expiry[key] = nv, mss[c]
      elseif logs and not decides[which[i]] then
        local j, r = which[i], o + 4 * (c - 1)
        local x = slidinglog(key, rates[j], capacities[j], ns[i], periods[j], now, slack, true)
        out[r + 2], out[r + 3], out[r + 4] = x[2], x[3], x[4]
      end
    end
    return true
  end
  for c = 1, k do
    -- nothing is taken: the budget as it is, with the take's own verdict
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
