-- reserve.lua: the token bucket's bookings (Store.ReserveN) and their
-- cancellation (Store.CancelReservation), after prelude.lua:
-- x/time/rate's reserveN and CancelAt, in microseconds, as
-- store/memory/reserve.go does them in nanoseconds. Like the algorithms'
-- functions (see prelude.lua) they are pure: onereserve.lua runs one alone,
-- batch.lua runs them beside the takes of a batch.
--
-- The bucket's value is bucket.lua's, with, after a booking ahead, the
-- last event after it: how long after the last update (ns) the latest
-- booking's instant is, which a cancellation needs, to the nanosecond as
-- x/time/rate keeps it. With struct, the byte 1 and three doubles; else
-- "ts:tokens:event". bucket.lua reads both forms and writes the shorter, as
-- a booking for now does: an allowed AllowN is a booking at its own
-- instant, the bucket's last update.
local function readBucket(v, capacity, now)
  if not v then
    return capacity, now, 0, true
  end
  local last, tokens, ev
  if binary(v) then
    local _
    if #v >= 25 then
      _, last, tokens, ev = struct.unpack('<Bddd', v)
    else
      _, last, tokens = struct.unpack('<Bdd', v)
    end
  else
    local ts, tk, e = string.match(v, '^(%d+):([^:]+):?(.*)$')
    last, tokens, ev = tonumber(ts), tonumber(tk), tonumber(e)
  end
  if not tokens or not last then
    return capacity, now, 0, true
  end
  if not ev or ev < 0 then
    ev = 0
  end
  return tokens, last, ev, false
end

local function advance(tokens, last, now, rate, capacity)
  if now < last then
    last = now
  end
  local e = now - last
  tokens = tokens + (floor(e / 1000000) + (e % 1000000) / 1000000) * rate
  if tokens > capacity then
    tokens = capacity
  end
  return tokens
end

-- seconds is time.Duration(ns).Seconds(): whole seconds, truncated toward
-- zero, plus the fraction.
local function seconds(ns)
  local sec = ns / 1e9
  if sec < 0 then
    sec = ceil(sec)
  else
    sec = floor(sec)
  end
  return sec + (ns - sec * 1e9) / 1e9
end

-- packBucket is the value of the bucket as of now with its last event ev
-- ns later, and its expiry in ms.
local function packBucket(now, tokens, ev, rate, capacity, slack)
  if ev < 0 then
    ev = 0
  end
  local nv
  if struct then
    nv = struct.pack('<Bddd', 1, now, tokens, ev)
  else
    nv = string.format('%.0f:%.17g:%.0f', now, tokens, ev)
  end
  return nv, ceil(ceil((capacity - tokens) / rate * 1000000) / 1000) + 1 + slack
end

-- book is reserveN of n tokens with the bound bound (ns) on the wait, on
-- the bucket in v at now: allowed (0|1), remaining, then the retry-after
-- in µs when not booked, or the delay in ns when booked (a booking's
-- retry-after is 0), reset-after µs, and the value and expiry to write
-- (nil: nothing). It is bucket.lua's bucket with the bound, and as lean
-- (no calls but the encoding's): a booking costs what a take does. A
-- booking for now is written as a take is, without its event: the event
-- is then the last update.
local function book(v, rate, capacity, n, bound, now, slack)
  local tokens, last
  if v then
    if binary(v) then
      local _
      _, last, tokens = struct.unpack('<Bdd', v)
    else
      local ts, tk = string.match(v, '^(%d+):([^:]+)')
      last, tokens = tonumber(ts), tonumber(tk)
    end
  end
  local fresh = not tokens or not last
  if fresh then
    tokens, last = capacity, now
  end
  if now < last then
    last = now
  end
  local e = now - last
  tokens = tokens + (floor(e / 1000000) + (e % 1000000) / 1000000) * rate
  if tokens > capacity then
    tokens = capacity
  end

  local left = tokens - n
  local wait = 0 -- ns, truncated as x/time/rate's durationFromTokens
  if left < 0 then
    wait = floor(1e9 * (-left / rate))
  end
  local allowed, nv, ms = 1, nil, nil
  if wait > bound then
    allowed, left = 0, tokens
    wait = ceil(-(tokens - n) / rate * 1000000 - bound / 1000) -- the retry-after
    if wait < 1 then
      wait = 1
    end
  elseif n > 0 or not fresh then
    if struct then
      if wait > 0 then
        nv = struct.pack('<Bddd', 1, now, left, wait)
      else
        nv = struct.pack('<Bdd', 1, now, left)
      end
    elseif wait > 0 then
      nv = string.format('%.0f:%.17g:%.0f', now, left, wait)
    else
      nv = string.format('%.0f:%.17g', now, left)
    end
    ms = ceil(ceil((capacity - left) / rate * 1000000) / 1000) + 1 + slack
  end
  local remaining, reset = 0, 0
  if left >= 1 then
    remaining = floor(left)
  end
  if left < capacity then
    reset = ceil((capacity - left) / rate * 1000000)
  end
  return allowed, remaining, wait, reset, nv, ms
end

-- cancel is CancelAt, at now, of a booking of n tokens at the instant
-- actUs µs and actNs ns (0..999) on the bucket in v: the value and expiry
-- to write, or nil when it gives nothing back.
local function cancel(v, rate, capacity, n, actUs, actNs, now, slack)
  local act = (actUs - now) * 1000 + actNs -- ns after now
  if act < 0 or not v then
    return nil, nil
  end
  local tokens, last, ev = readBucket(v, capacity, now)
  ev = (last - now) * 1000 + ev -- ns after now
  local restore = n - seconds(ev - act) * rate
  if restore <= 0 then
    return nil, nil
  end
  tokens = advance(tokens, last, now, rate, capacity) + restore
  if tokens > capacity then
    tokens = capacity
  end
  if act == ev then
    local prev = act - floor(1e9 * (n / rate))
    if prev >= 0 then
      ev = prev
    end
  end
  return packBucket(now, tokens, ev, rate, capacity, slack)
end
