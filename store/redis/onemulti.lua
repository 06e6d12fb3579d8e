-- onemulti.lua: the end of the script that decides an AllowAll sent alone
-- (a quiet server), after prelude.lua, every algorithm's file and
-- multi.lua: one MGET, multi, one SET per key it commits.
-- KEYS[i]  the key of take i (distinct keys; on Redis Cluster, one slot)
-- ARGV[1]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[2]  the caller's deadline in µs in Redis's clock, or "": none
-- ARGV[3 + 5(i-1)] .. ARGV[7 + 5(i-1)]  take i: its algorithm (the value
--          of ratelimit.Algorithm), rate per second, capacity, cost n,
--          period in µs
-- Returns, through reply, four integers per take, as multi fills them;
-- allowed is -1 for every take when the call came after its deadline and
-- took nothing. Last, the clock the script used (µs).
local now, slack = clock(ARGV[1])
local k = #KEYS
local out = {}
if late(ARGV[2], now) then
  for i = 1, k do
    local o = 4 * (i - 1)
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = -1, 0, 0, 0
  end
  return reply(out, now)
end

-- one MGET for the GET-based keys
local names, values = {}, {}
for i = 1, k do
  if ARGV[3 + 5 * (i - 1)] ~= '3' then
    names[#names + 1] = KEYS[i]
  end
end
if #names > 0 then
  local got = redis.call('MGET', unpack(names))
  for j = 1, #names do
    values[names[j]] = got[j]
  end
end

-- take i is its own limit i, in multi's layout
local which, decides, rates, capacities, periods = {}, {}, {}, {}, {}
for i = 1, k do
  local a = 3 + 5 * (i - 1)
  which[i], decides[i] = i, algorithms[tonumber(ARGV[a])]
  rates[i], capacities[i], periods[i] = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 4])
end
local expiry, order = {}, {}
if multi(k, 0, KEYS, which, ARGV, 6, 5, decides, rates, capacities, periods, values, expiry, order, now, slack, out, 0) then
  for w = 1, #order do
    local key = order[w]
    redis.call('SET', key, values[key], 'PX', px(expiry[key]))
  end
end
return reply(out, now)
