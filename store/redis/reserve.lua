-- reserve.lua: the token bucket's bookings (Store.ReserveN) and their
-- cancellation (Store.CancelReservation), after prelude.lua and bucket.lua:
-- x/time/rate's reserveN and CancelAt, in microseconds, as
-- store/memory/reserve.go does them in nanoseconds.
--
-- The bucket's value is bucket.lua's, with the last event after it: how
-- long after the last update (ns) the latest booking's instant is, which a
-- cancellation needs, to the nanosecond as x/time/rate keeps it. With
-- struct, the byte 1 and three doubles; else "ts:tokens:event". bucket.lua
-- reads both forms and writes the shorter: an allowed AllowN is a booking
-- at its own instant, the bucket's last update.
-- KEYS[1]  the key
-- ARGV[1]  the app's clock in µs, or "": Redis TIME
-- ARGV[2]  the deadline in µs in Redis's clock, or "": none
-- ARGV[3]  "r" to book, "c" to cancel
-- ARGV[4] .. ARGV[6]  refill rate per second, capacity, tokens n
-- ARGV[7]  to book: the bound on the wait in ns; to cancel: the booking's
--          instant, its whole µs
-- ARGV[8]  to cancel: the rest of the booking's instant, in ns (0..999)
-- Returns two rows (see prelude.lua's reply): allowed, remaining, retry µs,
-- reset µs; then 0 (the row's byte), the delay in ns, now in µs, 0.
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

-- writeBucket writes the bucket as of now with its last event ev ns later.
local function writeBucket(key, now, tokens, ev, rate, capacity, slack)
  if ev < 0 then
    ev = 0
  end
  local nv
  if struct then
    nv = struct.pack('<Bddd', 1, now, tokens, ev)
  else
    nv = string.format('%.0f:%.17g:%.0f', now, tokens, ev)
  end
  local ms = ceil(ceil((capacity - tokens) / rate * 1000000) / 1000) + 1 + slack
  redis.call('SET', key, nv, 'PX', px(ms))
end

local function reset(tokens, rate, capacity)
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

local function book(key, now, slack, rate, capacity, n, bound)
  local tokens, last, _, fresh = readBucket(redis.call('GET', key), capacity, now)
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
    return reply({0, whole(tokens), retry, reset(tokens, rate, capacity), 0, 0, 0, 0}, now)
  end
  if n > 0 or not fresh then
    writeBucket(key, now, left, wait, rate, capacity, slack)
  end
  return reply({1, whole(left), 0, reset(left, rate, capacity), 0, wait, now, 0}, now)
end

local function cancel(key, now, slack, rate, capacity, n, actUs, actNs)
  local v = redis.call('GET', key)
  local act = (actUs - now) * 1000 + actNs -- ns after now
  if act < 0 or not v then
    return reply({1, 0, 0, 0, 0, 0, 0, 0}, now)
  end
  local tokens, last, ev = readBucket(v, capacity, now)
  ev = (last - now) * 1000 + ev -- ns after now
  local restore = n - seconds(ev - act) * rate
  if restore > 0 then
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
    writeBucket(key, now, tokens, ev, rate, capacity, slack)
  end
  return reply({1, 0, 0, 0, 0, 0, 0, 0}, now)
end

local now, slack = clock(ARGV[1])
if late(ARGV[2], now) then
  return reply({-1, 0, 0, 0, 0, 0, 0, 0}, now)
end
local rate, capacity, n, x = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if ARGV[3] == 'c' then
  return cancel(KEYS[1], now, slack, rate, capacity, n, x, tonumber(ARGV[8]))
end
return book(KEYS[1], now, slack, rate, capacity, n, x)
