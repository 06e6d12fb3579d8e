-- swindow.lua: the sliding window counter, after prelude.lua: its state's
-- one decoding and encoding, and its decision (refund.lua uses them too).
-- Mirrors slidingWindow in store/memory/window.go, in microseconds: the
-- estimate prev * (1 - elapsed / period) + curr stays at most Rate.
--
-- v  the start of the current window (µs) and the counts of the window
--    before it and of it: with struct, the byte 1 and three doubles; else
--    the string "start:prev:curr"

-- decodeSliding reads the counts in v as of the window starting at start:
-- the previous window's and the current one's; and whether v held counts
-- of either (false: both have left the trailing period, or there is none),
-- and then the start v holds, if any.
local function decodeSliding(v, start, period)
  if not v then
    return 0, 0, false
  end
  local s, p, c
  if binary(v) then
    local _
    _, s, p, c = struct.unpack('<Bddd', v)
  else
    s, p, c = string.match(v, '^(%d+):(%d+):(%d+)$')
    s, p, c = tonumber(s), tonumber(p), tonumber(c)
  end
  if s == start then
    return p, c, true
  elseif s == start - period then
    return c, 0, true
  end
  return 0, 0, false, s
end

-- encodeSliding is the value of the counts of the window starting at start
-- and of the one before, and its expiry in ms: when both have left the
-- trailing period.
local function encodeSliding(start, prev, curr, period, now, slack)
  local ms = ceil((start + 2 * period - now) / 1000) + slack
  if struct then
    return struct.pack('<Bddd', 1, start, prev, curr), ms
  end
  return string.format('%.0f:%.0f:%.0f', start, prev, curr), ms
end

-- swindow decides a take of n (see prelude.lua).
local function swindow(v, rate, capacity, n, period, now, slack)
  local start = now - now % period
  local prev, curr, held, s = decodeSliding(v, start, period)
  if not held and s and s > start and (s - start) % period == 0 and s - now <= slack * 1000 then
    -- the app's clock (slack > 0) of a server a little ahead began a
    -- later window: decide in it, as of its start (see window.lua)
    now, start = s, s
    prev, curr = decodeSliding(v, start, period)
  elseif not held and s and s > start - period then
    -- a window of another period (a plan changed) begun within this
    -- one's trailing period: every request it counted is this window's,
    -- as a key keeps one budget whatever its plan
    local p, c = decodeSliding(v, s, period)
    prev, curr = 0, p + c
  end
  local elapsed = now - start
  local weight = 1 - elapsed / period

  local allowed, retry, nv, ms = 0, 0, nil, nil
  if prev * weight + curr + n <= capacity then
    allowed = 1
    curr = curr + n
    if n > 0 then
      nv, ms = encodeSliding(start, prev, curr, period, now, slack)
    end
  else
    local room = capacity - curr - n
    if room >= 0 and prev > 0 then
      -- later in this window, once prev's share has shrunk enough
      local e = math.ceil(period * (1 - room / prev))
      retry = math.max(e - elapsed, 1)
    else
      -- in the next window, where curr becomes prev
      local e = 0
      if curr > capacity - n then
        e = math.ceil(period * (1 - (capacity - n) / curr))
      end
      retry = period - elapsed + e
    end
  end

  local remaining = math.floor(capacity - (prev * weight + curr))
  if remaining < 0 then
    remaining = 0
  end
  local reset = 0
  if curr > 0 then
    reset = 2 * period - elapsed
  elseif prev > 0 then
    reset = period - elapsed
  end
  return allowed, remaining, retry, reset, nv, ms
end
