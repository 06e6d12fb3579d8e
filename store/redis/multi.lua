-- multi.lua: several takes decided as one, after prelude.lua and every
-- algorithm's file: the function both onemulti.lua (an AllowAll sent
-- alone) and batch.lua (an AllowAll in a batch) decide them with, after
-- algorithms.lua. Mirrors Store.AllowAll in store/memory/multi.go.

-- multi decides takes 1..k at now, all or nothing: take i is the key
-- keys[kb + i], and args[a] .. args[a + 4], a = ab + 5(i-1), are its
-- algorithm (the value of ratelimit.Algorithm), rate per second, capacity,
-- cost n and period in µs, numbers (ARGV's strings converted once by the
-- caller: a take of an AllowAll costs what a lone take does);
-- values[key] is the state of a GET-based key (false: none). Every take is
-- decided writing nothing; then, only if every one is allowed, they are
-- all committed: a sliding log's on its ZSET at once, the others' put in
-- nvs[i], mss[i] (the values and expiries to write, nil where none) for
-- the caller to write, when multi returns true. It fills out from o + 1,
-- four integers per take: if all are allowed, their decisions; else
-- nothing is taken (multi returns false), allowed says whether the take
-- alone would pass, retry-after is set for those that would not, and
-- remaining and reset-after describe the budget as it is.
local function multi(k, keys, kb, args, ab, values, now, slack, out, o, nvs, mss)
  local all = true
  for i = 1, k do
    local a, r, key = ab + 5 * (i - 1), o + 4 * (i - 1), keys[kb + i]
    local decide = algorithms[args[a]]
    local rate, capacity, n, period = args[a + 1], args[a + 2], args[a + 3], args[a + 4]
    if decide then
      out[r + 1], out[r + 2], out[r + 3], out[r + 4], nvs[i], mss[i] =
        decide(values[key], rate, capacity, n, period, now, slack)
    else
      local x = slidinglog(key, rate, capacity, n, period, now, slack, false)
      out[r + 1], out[r + 2], out[r + 3], out[r + 4] = x[1], x[2], x[3], x[4]
      nvs[i] = nil
    end
    if out[r + 1] ~= 1 then
      all = false
    end
  end
  for i = 1, k do
    local a, r, key = ab + 5 * (i - 1), o + 4 * (i - 1), keys[kb + i]
    local decide = algorithms[args[a]]
    if all then
      if not decide then
        local x = slidinglog(key, args[a + 1], args[a + 2], args[a + 3], args[a + 4], now, slack, true)
        out[r + 2], out[r + 3], out[r + 4] = x[2], x[3], x[4]
      end
    else
      -- nothing is taken: the budget as it is, with the take's own verdict
      local rate, capacity, period = args[a + 1], args[a + 2], args[a + 4]
      if decide then
        local _
        _, out[r + 2], _, out[r + 4] = decide(values[key], rate, capacity, 0, period, now, slack)
      else
        local x = slidinglog(key, rate, capacity, 0, period, now, slack, false)
        out[r + 2], out[r + 4] = x[2], x[4]
      end
    end
  end
  return all
end
