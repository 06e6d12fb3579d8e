-- multi.lua: the end of the script that decides several takes as one, after
-- prelude.lua and every algorithm's file. Phase 1 decides every take at the
-- same instant, writing nothing; phase 2 commits them all, only if every
-- one is allowed. Mirrors Store.AllowAll in store/memory/multi.go.
-- KEYS[i]  the key of take i (distinct keys; on Redis Cluster, one slot)
-- ARGV[1]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[2]  the caller's deadline in µs since the epoch, or "": none
-- ARGV[3 + 5(i-1)] .. ARGV[7 + 5(i-1)]  take i: its algorithm (the value
--          of ratelimit.Algorithm), then the arguments of a one-key script:
--          rate per second, capacity, cost n, period in µs
-- Returns four integers per take, as a one-key script does: if all are
-- allowed, their decisions; else nothing is taken, allowed says whether the
-- take alone would pass, retry-after is set for those that would not, and
-- remaining and reset-after describe the budget as it is. {-1} when the
-- call came after its deadline and took nothing. Last, in every case, the
-- clock the script used (µs), as single.lua returns it.
local algorithms = {[0] = bucket, [1] = window, [2] = swindow, [3] = slidinglog}

local now, slack, late = clock(ARGV[1], ARGV[2])
if late then
  return {-1, now}
end

local takes, results = {}, {}
local all = true
for i = 1, #KEYS do
  local a = 3 + 5 * (i - 1)
  local t = {decide = algorithms[tonumber(ARGV[a])], key = KEYS[i], rate = tonumber(ARGV[a + 1]),
    capacity = tonumber(ARGV[a + 2]), n = tonumber(ARGV[a + 3]), period = tonumber(ARGV[a + 4])}
  takes[i] = t
  results[i] = t.decide(t.key, t.rate, t.capacity, t.n, t.period, now, slack, false)
  if results[i][1] ~= 1 then
    all = false
  end
end

local out = {}
for i, t in ipairs(takes) do
  local r = results[i]
  if all then
    r = t.decide(t.key, t.rate, t.capacity, t.n, t.period, now, slack, true)
  else
    -- nothing is taken: the budget as it is, with the take's own verdict
    local report = t.decide(t.key, t.rate, t.capacity, 0, t.period, now, slack, false)
    r = {r[1], report[2], r[3], report[4]}
  end
  for j = 1, 4 do
    out[4 * (i - 1) + j] = r[j]
  end
end
out[#out + 1] = now
return out
