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
  for j = 1, 4 * k do
    out[j] = 0
  end
  for i = 1, k do
    out[4 * (i - 1) + 1] = -1
  end
  return reply(out, now)
end

local names = {}
for i = 1, k do
  if ARGV[3 + 5 * (i - 1)] ~= '3' then
    names[#names + 1] = KEYS[i]
  end
end
local values = {}
if #names > 0 then
  local got = redis.call('MGET', unpack(names))
  for j = 1, #names do
    values[names[j]] = got[j]
  end
end

local takes, writes = {}, {}
local all = true
for i = 1, k do
  local a = 3 + 5 * (i - 1)
  local t = {key = KEYS[i], decide = algorithms[ARGV[a]], rate = tonumber(ARGV[a + 1]),
    capacity = tonumber(ARGV[a + 2]), n = tonumber(ARGV[a + 3]), period = tonumber(ARGV[a + 4])}
  takes[i] = t
  local o = 4 * (i - 1)
  if t.decide then
    local nv, ms
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], nv, ms =
      t.decide(values[t.key], t.rate, t.capacity, t.n, t.period, now, slack)
    if nv then
      writes[i] = {nv, ms}
    end
  else
    local r = slidinglog(t.key, t.rate, t.capacity, t.n, t.period, now, slack, false)
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = r[1], r[2], r[3], r[4]
  end
  if out[o + 1] ~= 1 then
    all = false
  end
end

for i, t in ipairs(takes) do
  local o = 4 * (i - 1)
  if all then
    if t.decide then
      local w = writes[i]
      if w then
        redis.call('SET', t.key, w[1], 'PX', px(w[2]))
      end
    else
      local r = slidinglog(t.key, t.rate, t.capacity, t.n, t.period, now, slack, true)
      out[o + 2], out[o + 3], out[o + 4] = r[2], r[3], r[4]
    end
  else
    -- nothing is taken: the budget as it is, with the take's own verdict
    local rem, reset
    if t.decide then
      local _
      _, rem, _, reset = t.decide(values[t.key], t.rate, t.capacity, 0, t.period, now, slack)
    else
      local r = slidinglog(t.key, t.rate, t.capacity, 0, t.period, now, slack, false)
      rem, reset = r[2], r[4]
    end
    out[o + 2], out[o + 4] = rem, reset
  end
end
return reply(out, now)
