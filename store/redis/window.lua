-- window.lua: the fixed window counter, one atomic decision per call.
-- Mirrors fixedWindow in store/memory/window.go, in microseconds.
--
-- KEYS[1]  a string "end:count": the end of the counted window (µs) and its count
-- ARGV[2]  Rate, the most per window; ARGV[3] cost n; ARGV[4] period in µs
-- ARGV[5]  optional: the app's clock in µs since the epoch; absent: Redis TIME
-- Returns {allowed (0|1), remaining, retry-after µs, reset-after µs}.
local rate = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local period = tonumber(ARGV[4])
local now = tonumber(ARGV[5])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- windows are aligned to multiples of the period since the epoch
local stop = now - now % period + period
local count = 0
local v = redis.call('GET', KEYS[1])
if v then
  local e, c = string.match(v, '^(%d+):(%d+)$')
  if tonumber(e) == stop then
    count = tonumber(c)
  end
end

local allowed, retry = 0, 0
if count + n <= rate then
  allowed = 1
  count = count + n
  if n > 0 then
    redis.call('SET', KEYS[1], string.format('%.0f:%.0f', stop, count),
      'PXAT', string.format('%.0f', math.ceil(stop / 1000)))
  end
else
  retry = stop - now -- the next window takes n <= rate
end
local reset = 0
if count > 0 then
  reset = stop - now
end
return {allowed, rate - count, retry, reset}
