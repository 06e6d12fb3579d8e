-- multi.lua: the end of the script that decides several takes as one, after
-- prelude.lua and every algorithm's file. Every take is decided at the same
-- instant, writing nothing; then, only if every one is allowed, the writes
-- of all are committed. Mirrors Store.AllowAll in store/memory/multi.go.
-- KEYS[i]  the key of take i (distinct keys; on Redis Cluster, one slot)
-- ARGV[1]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[2]  the caller's deadline in µs in Redis's clock, or "": none
-- ARGV[3 + 5(i-1)] .. ARGV[7 + 5(i-1)]  take i: its algorithm (the value
--          of ratelimit.Algorithm), rate per second, capacity, cost n,
--          period in µs
-- Returns, through reply, four integers per take, as batch.lua does: if all
-- are allowed, their decisions; else nothing is taken, allowed says whether
-- the take alone would pass, retry-after is set for those that would not,
-- and remaining and reset-after describe the budget as it is. allowed is
-- -1 for every take when the call came after its deadline and took
-- nothing. Last, the clock the script used (µs).
local algorithms = {['0'] = bucket, ['1'] = window, ['2'] = swindow}

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

-- decide every take at now, writing nothing
local nvs, mss = {}, {}
local all = true
for i = 1, k do
  local a, o = 3 + 5 * (i - 1), 4 * (i - 1)
  local decide = algorithms[ARGV[a]]
  local rate, capacity, n, period = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  if decide then
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], nvs[i], mss[i] =
      decide(values[KEYS[i]], rate, capacity, n, period, now, slack)
  else
    local r = slidinglog(KEYS[i], rate, capacity, n, period, now, slack, false)
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = r[1], r[2], r[3], r[4]
  end
  if out[o + 1] ~= 1 then
    all = false
  end
end

-- commit them all, or report the budgets as they are
for i = 1, k do
  local a, o = 3 + 5 * (i - 1), 4 * (i - 1)
  local decide = algorithms[ARGV[a]]
  if all then
    if nvs[i] then
      redis.call('SET', KEYS[i], nvs[i], 'PX', px(mss[i]))
    elseif not decide then
      local r = slidinglog(KEYS[i], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), now, slack, true)
      out[o + 2], out[o + 3], out[o + 4] = r[2], r[3], r[4]
    end
  else
    -- nothing is taken: the budget as it is, with the take's own verdict
    local rate, capacity, period = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 4])
    if decide then
      local _
      _, out[o + 2], _, out[o + 4] = decide(values[KEYS[i]], rate, capacity, 0, period, now, slack)
    else
      local r = slidinglog(KEYS[i], rate, capacity, 0, period, now, slack, false)
      out[o + 2], out[o + 4] = r[2], r[4]
    end
  end
end
return reply(out, now)
