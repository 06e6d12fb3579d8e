-- window.lua: the fixed window counter, one atomic decision per call, after
-- prelude.lua. Mirrors fixedWindow in store/memory/window.go, in microseconds.
--
-- KEYS[1]  a string "end:count": the end of the counted window (µs) and its count

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
if count + n <= capacity then
  allowed = 1
  count = count + n
  if n > 0 then
    redis.call('SET', KEYS[1], string.format('%.0f:%.0f', stop, count),
      'PX', string.format('%.0f', math.ceil((stop - now) / 1000) + slack))
  end
else
  retry = stop - now -- the next window takes n <= capacity
end
local reset = 0
if count > 0 then
  reset = stop - now
end
return {allowed, capacity - count, retry, reset}
