-- prelude.lua: the start of every script (scripts.go puts it in front).
-- ARGV[1]  refill rate in tokens per second (a float, as a string)
-- ARGV[2]  capacity: Burst for the token bucket, Rate for the windows
-- ARGV[3]  cost n
-- ARGV[4]  period in µs
-- ARGV[5]  the app's clock in µs since the epoch, or "": Redis TIME
-- ARGV[6]  the caller's deadline in µs since the epoch, or "": none
-- Every script returns {allowed (0|1), remaining, retry-after µs,
-- reset-after µs}, integers only, because Redis truncates Lua numbers;
-- {-1, 0, 0, 0} when the call came after its deadline and took nothing.
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local period = tonumber(ARGV[4])
local now = tonumber(ARGV[5])
-- Expiries are relative, so clocks that disagree never expire a key early;
-- with the app's clock, a second more for app servers whose clocks differ.
local slack = 1000
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  slack = 0
  local deadline = tonumber(ARGV[6])
  if deadline and now > deadline then
    -- the caller has given up on this decision: take nothing
    return {-1, 0, 0, 0}
  end
end
