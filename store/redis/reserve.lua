-- reserve.lua: the token bucket's bookings (Store.ReserveN) and their
-- cancellation (Store.CancelReservation), after prelude.lua and bucket.lua:
-- x/time/rate's reserveN and CancelAt, in microseconds, as
-- store/memory/reserve.go does them in nanoseconds. Like the algorithms'
-- functions (see prelude.lua) they are pure: onereserve.lua runs one alone,
-- batch.lua runs them beside the takes of a batch.
--
-- The bucket's value is bucket.lua's, with the last event after it: how
-- long after the last update (ns) the latest booking's instant is, which a
-- cancellation needs, to the nanosecond as x/time/rate keeps it. With
-- struct, the byte 1 and three doubles; else "ts:tokens:event". bucket.lua
-- reads both forms and writes the shorter: an allowed AllowN is a booking
-- at its own instant, the bucket's last update.
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

local function resetAfter(tokens, rate, capacity)
  if tokens < capacity then
    return ceil((capacity - tokens) / rate * 1000000)
  end
  return 0
end

local function whole(tokens)
  if tokens >= 1 then
    return floor(tokens)
  end
  return 0
end

-- book is reserveN of n tokens with the bound bound (ns) on the wait, on
-- the bucket in v at now: allowed (0|1), remaining, then the retry-after
-- in µs when not booked, or the delay in ns when booked (a booking's
-- retry-after is 0), reset-after µs, and the value and expiry to write
-- (nil: nothing).
local function book(v, rate, capacity, n, bound, now, slack)
  local tokens, last, _, fresh = readBucket(v, capacity, now)
  tokens = advance(tokens, last, now, rate, capacity)
  local left = tokens - n
  local wait = 0 -- ns, truncated as x/time/rate's durationFromTokens
  if left < 0 then
    wait = floor(1e9 * (-left / rate))
  end
  if wait > bound then
    local retry = ceil(-left / rate * 1000000 - bound / 1000)
    if retry < 1 then
      retry = 1
    end
    return 0, whole(tokens), retry, resetAfter(tokens, rate, capacity), nil, nil
  end
  local nv, ms
  if n > 0 or not fresh then
    nv, ms = packBucket(now, left, wait, rate, capacity, slack)
  end
  return 1, whole(left), wait, resetAfter(left, rate, capacity), nv, ms
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
