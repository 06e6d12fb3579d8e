-- bucket.lua: the token bucket, after prelude.lua: its state's one
-- decoding and encoding, its one refill, and its decision. Mirrors
-- takeTokens in store/memory/bucket.go line for line, in microseconds, so
-- that both stores decide as golang.org/x/time/rate does, but for since:
-- with the app servers' clocks, a bucket's time never goes back. reserve.lua's
-- bookings and refund.lua's refunds use the same functions.
--
-- v  the last update (µs) and the tokens then: with struct, the byte 1 and
--    two doubles (exact); else the string "ts:tokens", the tokens written
--    with 17 significant digits, so they read back exactly. After a booking
--    ahead, a third value: its event, how long after the last update (ns)
--    the latest booking's instant is (see reserve.lua).

-- decodeBucket reads the bucket in v: its last update, tokens and last
-- event (0: the last update); nil when there is none, or v is not one.
local function decodeBucket(v)
  if not v then
    return nil
  end
  local last, tokens, ev
  if struct and byte(v, 1) == 1 then -- binary(v), inlined: every take decodes
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
    return nil
  end
  if not ev or ev < 0 then
    ev = 0
  end
  return last, tokens, ev
end

-- encodeBucket is the value of the bucket with tokens as of now and its
-- last event ev ns later (0: none, the shorter form), and its expiry in ms:
-- 1 ms after the bucket is full again, so that an expired key is a full one.
local function encodeBucket(now, tokens, ev, rate, capacity, slack)
  local nv
  if ev > 0 then
    if struct then
      nv = struct.pack('<Bddd', 1, now, tokens, ev)
    else
      nv = string.format('%.0f:%.17g:%.0f', now, tokens, ev)
    end
  elseif struct then
    nv = struct.pack('<Bdd', 1, now, tokens)
  else
    nv = string.format('%.0f:%.17g', now, tokens)
  end
  return nv, ceil(ceil((capacity - tokens) / rate * 1000000) / 1000) + 1 + slack
end

-- refill is the bucket's tokens at now, from tokens at last: x/time/rate's
-- advance, with the elapsed time in seconds as time.Duration.Seconds
-- computes it (whole seconds plus the fraction).
local function refill(tokens, last, now, rate, capacity)
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

-- since is the instant a decision on a bucket last updated at last is made
-- at: now, or, with the app's clock (slack > 0), never before last. App
-- servers whose clocks differ would otherwise, taking turns, each refill
-- the bucket by their difference on every turn, without bound; Redis's
-- own clock (slack 0) is one per key, and x/time/rate's rule holds.
local function since(last, now, slack)
  if slack > 0 and last and now < last then
    return last
  end
  return now
end

-- bucketBudget is the remaining and the reset-after (µs) of a bucket
-- holding tokens.
local function bucketBudget(tokens, rate, capacity)
  local remaining, reset = 0, 0
  if tokens >= 1 then
    remaining = floor(tokens)
  end
  if tokens < capacity then
    reset = ceil((capacity - tokens) / rate * 1000000)
  end
  return remaining, reset
end

-- bucket decides a take of n tokens (see prelude.lua).
local function bucket(v, rate, capacity, n, period, now, slack)
  local last, tokens = decodeBucket(v)
  if slack > 0 and last and now < last then -- since, inlined: every take decides here
    now = last
  end
  if not last then
    tokens, last = capacity, now
  end
  tokens = refill(tokens, last, now, rate, capacity)

  local allowed, retry, nv, ms = 0, 0, nil, nil
  local left = tokens - n
  -- x/time/rate admits when the wait for the missing part truncates to 0 ns
  if left >= 0 or (-left / rate) * 1e9 < 1 then
    allowed = 1
    tokens = left
    if n > 0 then
      nv, ms = encodeBucket(now, left, 0, rate, capacity, slack)
    end
  else
    retry = ceil(-left / rate * 1000000)
  end
  local remaining, reset = bucketBudget(tokens, rate, capacity)
  return allowed, remaining, retry, reset, nv, ms
end
