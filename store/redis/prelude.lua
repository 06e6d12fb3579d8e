-- prelude.lua: the start of every script (scripts.go puts it in front): the
-- clock.
--
-- Each algorithm's file then defines a function
--   decide(key, rate, capacity, n, period, now, slack, commit) -> result
-- rate   refill rate in tokens per second (a number)
-- capacity  Burst for the token bucket, Rate for the windows
-- n      the cost
-- period in µs
-- now    the clock in µs since the epoch; slack the µs added to expiries
-- commit  whether to write the take (an allowed one, n > 0) to Redis
-- that decides, and writes the take only when asked: result is {allowed
-- (0|1), remaining, retry-after µs, reset-after µs}, integers only, because
-- Redis truncates Lua numbers, as they stand once the take is committed.
-- Called again with the same arguments and commit set, it decides the same.
-- A one-key script (single.lua) commits at once; multi.lua decides every
-- take without writing, then commits them all only if every one is
-- allowed.

-- clock returns now in µs, the slack of expiries, and whether the call
-- came after the caller's deadline (the caller has given up on it).
-- app is the app's clock in µs or "": Redis TIME; deadline the caller's
-- deadline in µs or "": none, checked only against Redis TIME (the store
-- sends it in Redis's clock, from the TIME each script returns last).
local function clock(app, deadline)
  -- Expiries are relative, so clocks that disagree never expire a key early;
  -- with the app's clock, a second more for app servers whose clocks differ.
  local now = tonumber(app)
  local slack = 1000
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    slack = 0
    local d = tonumber(deadline)
    if d and now > d then
      return now, slack, true
    end
  end
  return now, slack, false
end

