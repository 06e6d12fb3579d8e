-- window.lua: the fixed window counter, after prelude.lua: its state's one
-- decoding and encoding, and its decision (refund.lua uses them too).
-- Mirrors fixedWindow in store/memory/window.go, in microseconds.
-- Windows of a calendar limit come from the app: see calendarStop.
--
-- v  the end of the counted window (µs) and its count: with struct, the
--    byte 1 and two doubles; else the string "end:count"
-- A calendar limit (calendar.go) comes with a negative rate, -(cur·2^22 +
-- nxt): cur and nxt the seconds of the app's current window and of the
-- next, and period the end of the current window (µs since the epoch).
-- Redis's clock picks the window: the one before, the app's, or the next;
-- nil if it holds none (clocks a window apart): the take is then answered
-- -2, takes nothing, and the store sends it again around Redis's clock.
-- The window before is known only to end where the app's starts; taking
-- the half window before that as its own is exact because no day or month
-- of any zone is shorter than half the next (the Go calendar's oracle test
-- checks it for every zone of the tz database). The windows themselves,
-- skipped and repeated midnights included, are Limit.Window's.
local function calendarStop(packed, stop, now)
  local cur, nxt = math.floor(packed / 4194304) * 1000000, (packed % 4194304) * 1000000
  if now < stop - cur - cur / 2 then
    return nil
  elseif now < stop - cur then
    return stop - cur -- the window before ends where the app's starts
  elseif now < stop then
    return stop
  elseif now < stop + nxt then
    return stop + nxt
  end
  return nil
end

-- windowStop is the end (µs) of the window that holds now: windows are
-- aligned to multiples of the period since the epoch, or to a calendar's
-- days or months (rate < 0); nil if a calendar's windows hold none.
local function windowStop(rate, period, now)
  if rate < 0 then
    return calendarStop(-rate, period, now)
  end
  return now - now % period + period
end

-- decodeWindow reads the window in v: the end of its window and its count;
-- nil when there is none.
local function decodeWindow(v)
  if not v then
    return nil
  end
  if binary(v) then
    local _, e, c = struct.unpack('<Bdd', v)
    return e, c
  end
  local e, c = string.match(v, '^(%d+):(%d+)$')
  return tonumber(e), tonumber(c)
end

-- encodeWindow is the value of count in the window ending at stop, and
-- its expiry in ms: when that window ends.
local function encodeWindow(stop, count, now, slack)
  local ms = ceil((stop - now) / 1000) + slack
  if struct then
    return struct.pack('<Bdd', 1, stop, count), ms
  end
  return string.format('%.0f:%.0f', stop, count), ms
end

-- window decides a take of n (see prelude.lua).
local function window(v, rate, capacity, n, period, now, slack)
  local stop = windowStop(rate, period, now)
  if not stop then
    return -2, 0, 0, 0, nil, nil
  end
  local count, ends = 0, stop -- ends: when the count told of ends
  local e, c = decodeWindow(v)
  if e == stop and c then
    count = c
  elseif c and c > 0 and e and e > now then
    -- a window of another period (a plan changed), or a later one that an
    -- app clock ahead opened, that has not ended: its count carries over,
    -- as a key keeps one budget whatever its plan, and ends with it
    count, ends = c, e
  end

  local allowed, retry, nv, ms = 0, 0, nil, nil
  if count + n <= capacity then
    allowed = 1
    count = count + n
    if n > 0 then
      -- written with this window's takes, until the later end: never cut
      -- short by a shorter window, nor each server's window counted
      -- afresh by the other's
      ends = math.max(ends, stop)
      nv, ms = encodeWindow(ends, count, now, slack)
    end
  else
    retry = ends - now -- the window after it takes n <= capacity
  end
  local reset = 0
  if count > 0 then
    reset = ends - now
  end
  -- a window filled under a higher limit (a plan since lowered) has none
  -- left, never fewer
  return allowed, math.max(capacity - count, 0), retry, reset, nv, ms
end
