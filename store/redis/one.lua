-- one.lua: the end of a one-take script, after prelude.lua and one
-- algorithm's file, for a decision sent alone (a quiet server): no batch's
-- tables, one GET and at most one SET. scripts.go appends
-- "return one(<algorithm's function>)", and for the sliding log, which
-- reads and writes its ZSET itself, "return one(logTake, true)".
-- KEYS[1]  the key
-- ARGV[1]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[2] .. ARGV[7]  the algorithm (the value of ratelimit.Algorithm),
--          refill rate per second, capacity, cost n, period in µs, and the
--          deadline in µs in Redis's clock or "": none
-- Returns, through reply1, what batch.lua returns for one take.
local function one(decide, onKey)
  local now, slack = clock(ARGV[1])
  if late(ARGV[7], now) then
    return reply1(-1, 0, 0, 0, now)
  end
  local key = KEYS[1]
  local v = key -- decide's first argument: the key itself, or its value
  if not onKey then
    v = redis.call('GET', key)
  end
  local allowed, remaining, retry, reset, nv, ms = decide(v,
    tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), now, slack)
  if nv then
    redis.call('SET', key, nv, 'PX', px(ms))
  end
  return reply1(allowed, remaining, retry, reset, now)
end
