-- bucket.lua: the token bucket's decision, after prelude.lua. Mirrors
-- takeTokens in store/memory/bucket.go line for line, in microseconds, so
-- that both stores decide as golang.org/x/time/rate does.
--
-- v  the last update (µs) and the tokens then: with struct, the byte 1 and
--    two doubles (exact); else the string "ts:tokens", the tokens written
--    with 17 significant digits, so they read back exactly; a booking
--    (reserve.lua) adds its instant after them, which this reads past
local function bucket(v, rate, capacity, n, period, now, slack)
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
  if not tokens or not last then
    tokens, last = capacity, now
  end
  if now < last then
    last = now
  end
  local e = now - last
  -- time.Duration.Seconds: whole seconds plus the fraction, as Go computes it
  tokens = tokens + (floor(e / 1000000) + (e % 1000000) / 1000000) * rate
  if tokens > capacity then
    tokens = capacity
  end

  local allowed, retry, nv, ms = 0, 0, nil, nil
  local left = tokens - n
  -- x/time/rate admits when the wait for the missing part truncates to 0 ns
  if left >= 0 or (-left / rate) * 1e9 < 1 then
    allowed = 1
    tokens = left
    if n > 0 then
      if struct then
        nv = struct.pack('<Bdd', 1, now, left)
      else
        nv = string.format('%.0f:%.17g', now, left)
      end
      -- expire 1 ms after the bucket is full again: an expired key is a full one
      ms = ceil(ceil((capacity - left) / rate * 1000000) / 1000) + 1 + slack
    end
  else
    retry = ceil(-left / rate * 1000000)
  end

  local remaining = 0
  if tokens >= 1 then
    remaining = floor(tokens)
  end
  local reset = 0
  if tokens < capacity then
    reset = ceil((capacity - tokens) / rate * 1000000)
  end
  return allowed, remaining, retry, reset, nv, ms
end
