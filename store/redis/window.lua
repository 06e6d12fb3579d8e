-- window.lua: the fixed window counter's decision, after prelude.lua.
-- Mirrors fixedWindow in store/memory/window.go, in microseconds.
--
-- key  a string "end:count": the end of the counted window (µs) and its count
local function window(key, rate, capacity, n, period, now, slack, commit)
  -- windows are aligned to multiples of the period since the epoch
  local stop = now - now % period + period
  local count = 0
  local v = redis.call('GET', key)
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
    if n > 0 and commit then
      redis.call('SET', key, string.format('%.0f:%.0f', stop, count),
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
end
