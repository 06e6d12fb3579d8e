-- single.lua: the end of a one-key script, after prelude.lua and the
-- algorithm's file: one decision, committed at once.
-- KEYS[1]  the key
-- ARGV[1]  refill rate in tokens per second (a float, as a string)
-- ARGV[2]  capacity: Burst for the token bucket, Rate for the windows
-- ARGV[3]  cost n
-- ARGV[4]  period in µs
-- ARGV[5]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[6]  the caller's deadline in µs since the epoch, or "": none
-- Returns {allowed (0|1), remaining, retry-after µs, reset-after µs, now};
-- {-1, 0, 0, 0, now} when the call came after its deadline and took
-- nothing. now, the clock the script used (µs), lets the store learn how
-- far Redis's clock is from its own.
local function single(decide)
  local now, slack, late = clock(ARGV[5], ARGV[6])
  if late then
    return {-1, 0, 0, 0, now}
  end
  local result = decide(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]),
    tonumber(ARGV[3]), tonumber(ARGV[4]), now, slack, true)
  result[5] = now
  return result
end
