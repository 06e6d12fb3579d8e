-- window.lua: the fixed window counter's decision, after prelude.lua.
-- Mirrors fixedWindow in store/memory/window.go, in microseconds.
--
-- v  the end of the counted window (µs) and its count: with struct, the
--    byte 1 and two doubles; else the string "end:count"
local function window(v, rate, capacity, n, period, now, slack)
  -- windows are aligned to multiples of the period since the epoch
  local stop = now - now % period + period
  local count = 0
  if v then
    local e, c
    if binary(v) then
      local _
      _, e, c = struct.unpack('<Bdd', v)
    else
      e, c = string.match(v, '^(%d+):(%d+)$')
      e, c = tonumber(e), tonumber(c)
    end
    if e == stop then
      count = c
    end
  end

  local allowed, retry, nv, ms = 0, 0, nil, nil
  if count + n <= capacity then
    allowed = 1
    count = count + n
    if n > 0 then
      if struct then
        nv = struct.pack('<Bdd', 1, stop, count)
      else
        nv = string.format('%.0f:%.0f', stop, count)
      end
      ms = math.ceil((stop - now) / 1000) + slack
    end
  else
    retry = stop - now -- the next window takes n <= capacity
  end
  local reset = 0
  if count > 0 then
    reset = stop - now
  end
  return allowed, capacity - count, retry, reset, nv, ms
end
