-- reserve.lua: the token bucket's bookings (Store.ReserveN) and their
-- cancellation (Store.CancelReservation), after prelude.lua and bucket.lua,
-- whose decoding, refill and encoding they use:
-- x/time/rate's reserveN and CancelAt, in microseconds, as
-- store/memory/reserve.go does them in nanoseconds. Like the algorithms'
-- functions (see prelude.lua) they are pure: onereserve.lua runs one alone,
-- batch.lua runs them beside the takes of a batch.
--
-- The bucket's value is bucket.lua's, with, after a booking ahead, the
-- last event after it: how long after the last update (ns) the latest
-- booking's instant is, which a cancellation needs, to the nanosecond as
-- x/time/rate keeps it. A take writes the shorter form, as a booking for
-- now does: an allowed AllowN is a booking at its own instant, the
-- bucket's last update.

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

-- book is reserveN of n tokens with the bound bound (ns) on the wait, on
-- the bucket in v at now: allowed (0|1), remaining, then the retry-after
-- in µs when not booked, or the delay in ns when booked (a booking's
-- retry-after is 0), reset-after µs, and the value and expiry to write
-- (nil: nothing). It is bucket.lua's bucket with the bound, on the same
-- decoding, refill and encoding: a booking with no wait leaves the state a
-- take leaves (variants_test.go checks it), and costs what a take does. A
-- booking for now is written as a take is, without its event: the event
-- is then the last update.
local function book(v, rate, capacity, n, bound, now, slack)
  local last, tokens = decodeBucket(v)
  now = since(last, now, slack)
  local fresh = not last
  if fresh then
    tokens, last = capacity, now
  end
  tokens = refill(tokens, last, now, rate, capacity)

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
    nv, ms = encodeBucket(now, left, wait, rate, capacity, slack)
  end
  local remaining, reset = bucketBudget(left, rate, capacity)
  return allowed, remaining, wait, reset, nv, ms
end

-- cancel is CancelAt, at now, of a booking of n tokens at the instant
-- actUs µs and actNs ns (0..999) on the bucket in v: the value and expiry
-- to write, or nil when it gives nothing back.
local function cancel(v, rate, capacity, n, actUs, actNs, now, slack)
  local last, tokens, ev = decodeBucket(v)
  if not last then
    return nil, nil
  end
  now = since(last, now, slack)
  local act = (actUs - now) * 1000 + actNs -- ns after now
  if act < 0 then
    return nil, nil
  end
  ev = (last - now) * 1000 + ev -- ns after now
  local restore = n - seconds(ev - act) * rate
  if restore <= 0 then
    return nil, nil
  end
  tokens = refill(tokens, last, now, rate, capacity) + restore
  if tokens > capacity then
    tokens = capacity
  end
  if act == ev then
    local prev = act - floor(1e9 * (n / rate))
    if prev >= 0 then
      ev = prev
    end
  end
  return encodeBucket(now, tokens, ev, rate, capacity, slack)
end
