-- batch.lua: the end of the script that decides a batch of takes, after
-- prelude.lua, every algorithm's file, algorithms.lua, reserve.lua,
-- multi.lua and read.lua (or node.lua, for a batch over a Cluster node's
-- slots). Each
-- take (or AllowAll: see below) is its own decision, atomic, decided in
-- order (a take sees the takes before it on the same key) at one instant
-- of Redis's clock, with its own deadline; one MGET reads the state of
-- every GET-based key and one SET per key writes what the batch took.
-- KEYS[i]  the key of take i (on Redis Cluster, all of one slot, or of one
--          node with node.lua)
-- ARGV[1]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[2]  m, the number of distinct limits in the batch
-- ARGV[3]  the earliest deadline of the batch's takes in µs in Redis's
--          clock, or "": none has one (then no take's own is read)
-- ARGV[4]  the takes' limits, one byte each: byte i is take i's limit j
--          (one string.byte for the batch, where a tonumber per take
--          costs more than the rest of its arguments' reading)
-- ARGV[5 + 4(j-1)] .. ARGV[8 + 4(j-1)]  limit j: its algorithm (the value
--          of ratelimit.Algorithm), refill rate per second, capacity,
--          period in µs
-- ARGV[5 + 4m + 2(i-1)], ARGV[6 + 4m + 2(i-1)]  take i: its cost n, and
--          its deadline in µs in Redis's clock or "": none
-- A booking (reserve.lua's book) or a cancellation (its cancel) is a take
-- whose limit has the algorithm 4 (book) or 5 (cancel), a token bucket's
-- rate and capacity; its own arguments follow every take's, in the order
-- of the takes: a booking's bound on the wait in ns, a cancellation's
-- instant in whole µs and the rest in ns.
-- An AllowAll of k takes (multi.lua's multi) is k consecutive takes whose
-- limits have the algorithm 8 + their own; the first has the AllowAll's
-- deadline, the others "": none; its own argument, among the bookings'
-- and cancellations', is k. Its takes are decided all or nothing, at their
-- place in the batch, as multi.lua decides them alone.
-- Returns, through reply, four integers per take: allowed (0|1), remaining,
-- retry-after µs (a booking's delay in ns), reset-after µs; allowed is -1
-- for a take that came after its deadline and took nothing; a cancellation
-- is 1, 0, 0, 0. Last, the clock the script used (µs), which lets the
-- store learn how far Redis's clock is from its own.
local now, slack = clock(ARGV[1])
local call = redis.call

-- the batch's distinct limits, read once
local m = tonumber(ARGV[2])
local soonest = tonumber(ARGV[3])
local lates = soonest ~= nil and now > soonest -- false: no take is late
local which = {byte(ARGV[4], 1, -1)}
local algs, rates, capacities, periods = {}, {}, {}, {}
local decides, inner = {}, {} -- a lone take's decision; an AllowAll's take's
local logs = false -- whether a take is on a sliding log (no GET)
for j = 1, m do
  local a = 5 + 4 * (j - 1)
  local alg = tonumber(ARGV[a])
  algs[j], rates[j], capacities[j], periods[j] = alg, tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  if alg >= 8 then
    inner[j] = algorithms[alg - 8]
  else
    decides[j] = algorithms[alg]
  end
  logs = logs or alg == 3 or alg == 11
end
local first = 5 + 4 * m -- take i's arguments start at first + 2(i-1)
local extra = first + 2 * #KEYS -- the next booking's or cancellation's own

local names = KEYS
if logs then
  names = {}
  for i = 1, #KEYS do
    local alg = algs[which[i]]
    if alg ~= 3 and alg ~= 11 then
      names[#names + 1] = KEYS[i]
    end
  end
end
local values, away = read(names, KEYS)
if not values then -- nothing was read or written
  return redis.error_reply('NOTLOCAL ' .. away .. ' is not served by this node')
end

local out, expiry, order = {}, {}, {}
local upto = 0 -- the last take of the AllowAll being decided
for i = 1, #KEYS do
  local a, o, j = first + 2 * (i - 1), 4 * (i - 1), which[i]
  if i <= upto then
    -- an AllowAll's take after its first: decided with it
  elseif lates and late(ARGV[a + 1], now) then
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = -1, 0, 0, 0
    local alg = algs[j]
    if alg == 4 then
      extra = extra + 1
    elseif alg == 5 then
      extra = extra + 2
    elseif alg >= 8 then -- an AllowAll's first take: all of its takes
      upto = i + tonumber(ARGV[extra]) - 1
      extra = extra + 1
      for r = o + 5, 4 * upto do
        out[r] = (r % 4 == 1) and -1 or 0
      end
    end
  else
    local key, n = KEYS[i], tonumber(ARGV[a])
    local decide = decides[j]
    if decide then
      local nv, ms
      out[o + 1], out[o + 2], out[o + 3], out[o + 4], nv, ms =
        decide(values[key], rates[j], capacities[j], n, periods[j], now, slack)
      if nv then
        if not expiry[key] then
          order[#order + 1] = key
        end
        values[key], expiry[key] = nv, ms
      end
    elseif algs[j] == 3 then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = logTake(key, rates[j], capacities[j], n, periods[j], now, slack)
    elseif algs[j] >= 8 then
      -- an AllowAll's first take: decide all of its takes
      local k = tonumber(ARGV[extra])
      extra = extra + 1
      upto = i + k - 1
      multi(k, i - 1, KEYS, which, ARGV, first, 2, inner, rates, capacities, periods, values, expiry, order, now, slack, out, o)
    else
      local nv, ms
      if algs[j] == 4 then
        out[o + 1], out[o + 2], out[o + 3], out[o + 4], nv, ms =
          book(values[key], rates[j], capacities[j], n, tonumber(ARGV[extra]), now, slack)
        extra = extra + 1
      else
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 1, 0, 0, 0
        nv, ms = cancel(values[key], rates[j], capacities[j], n, tonumber(ARGV[extra]), tonumber(ARGV[extra + 1]), now, slack)
        extra = extra + 2
      end
      if nv then
        if not expiry[key] then
          order[#order + 1] = key
        end
        values[key], expiry[key] = nv, ms
      end
    end
  end
end
-- Takes of one limit often leave the same expiry: each is formatted once
-- (by -ms: a positive integer key makes some servers' Lua, miniredis's,
-- fill an array up to it).
local pxs = {}
for w = 1, #order do
  local key = order[w]
  local ms = expiry[key]
  local p = pxs[-ms]
  if not p then
    p = px(ms)
    pxs[-ms] = p
  end
  call('SET', key, values[key], 'PX', p)
end
return reply(out, now)
