-- refund.lua: a refund (Store.RefundN) sent alone, after prelude.lua, the
-- algorithms' files and reserve.lua. Each function mirrors its namesake in
-- store/memory/refund.go, in microseconds; the report after it is the
-- algorithm's own decision of n = 0.
-- KEYS[1]  the key
-- ARGV[1]  the app's clock in µs, or "": Redis TIME
-- ARGV[2]  the deadline in µs in Redis's clock, or "": none
-- ARGV[3] .. ARGV[7]  the algorithm (ratelimit.Algorithm), refill rate per
--          second (a calendar's windows: see window.lua), capacity, the
--          tokens n to give back, period in µs (a calendar's: the end of
--          the app's window)
-- ARGV[8]  age: the take is at most this old, µs (rounded up)
-- ARGV[9]  a calendar limit's start of the window before the app's, µs
-- Returns, through reply1, allowed (1; -1 late; -2 a calendar window Redis's
-- clock is not in: nothing written), remaining, 0, reset-after µs, and now.

-- refundBucket gives n tokens back to the bucket in v at now, up to its
-- capacity, keeping a booking's last event: the value and expiry to
-- write, or nil.
local function refundBucket(v, rate, capacity, n, now, slack)
  local last, tokens, ev = decodeBucket(v)
  if not last or n == 0 then
    return nil, nil
  end
  now = since(last, now, slack)
  ev = (last - now) * 1000 + ev -- ns after now
  tokens = refill(tokens, last, now, rate, capacity) + n
  if tokens > capacity then
    tokens = capacity
  end
  return encodeBucket(now, tokens, ev, rate, capacity, slack)
end

-- refundWindow gives n back to the fixed window count in v if the take was
-- surely in now's window: the value and expiry to write, or nil; and true
-- when Redis's clock is in none of a calendar's windows.
local function refundWindow(v, rate, capacity, n, period, age, before, now, slack)
  local stop = windowStop(rate, period, now)
  if not stop then
    return nil, nil, true
  end
  local start
  if rate >= 0 then
    start = stop - period
  elseif stop < period then
    start = before -- the window before the app's
  elseif stop == period then
    start = period - floor(-rate / 4194304) * 1000000
  else
    start = period
  end
  local e, c = decodeWindow(v)
  if not c or e ~= stop or age > now - start then
    return nil, nil -- another window's count, or a take that may be in one
  end
  return encodeWindow(stop, math.max(0, c - n), now, slack)
end

-- refundSliding gives n back to the current window's count if the take
-- was surely in it, else to the previous window's if it may be there:
-- the value and expiry to write, or nil.
local function refundSliding(v, n, period, age, now, slack)
  local start = now - now % period
  local prev, curr, counted = decodeSliding(v, start, period)
  if not counted then
    return nil, nil -- both counts have left the trailing period
  end
  local elapsed = now - start
  if age <= elapsed then
    curr = math.max(0, curr - n)
  elseif age - elapsed <= period then
    prev = math.max(0, prev - n)
  else
    return nil, nil
  end
  return encodeSliding(start, prev, curr, period, now, slack)
end

-- refundLog removes up to n tokens from the log's entries no older than
-- age, the oldest first, and renumbers the running totals of the entries
-- after them (see log.lua), so that the window's sum stays exact.
local function refundLog(key, n, period, age, now, slack)
  local clock = now
  if age >= period then
    -- the take may have left the window, its entry dropped by a commit
    -- since: another request's entry is not its to give back
    return
  end
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if not last[1] then
    return
  end
  if now < tonumber(last[2]) then
    now = tonumber(last[2]) -- the log's time order, as slidinglog keeps it
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - period))
  local from = math.max(now - age, now - period + 1)
  local entries = redis.call('ZRANGEBYSCORE', key, string.format('%.0f', from), '+inf', 'WITHSCORES')
  local left, gone = n, 0
  for i = 1, #entries, 2 do
    local c, k = string.match(entries[i], '^(%d+):(%d+)$')
    c, k = tonumber(c), tonumber(k)
    local give = math.min(k, left)
    left, gone = left - give, gone + give
    if gone == 0 then
      break -- n == 0: nothing to give
    end
    redis.call('ZREM', key, entries[i])
    if k > give then
      redis.call('ZADD', key, entries[i + 1], string.format('%016.0f:%.0f', c - gone, k - give))
    end
  end
  last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if gone > 0 and last[1] then
    redis.call('PEXPIRE', key, string.format('%.0f', math.ceil((tonumber(last[2]) + period - clock) / 1000) + slack))
  end
end

local now, slack = clock(ARGV[1])
if late(ARGV[2], now) then
  return reply1(-1, 0, 0, 0, now)
end
local key, alg = KEYS[1], tonumber(ARGV[3])
local rate, capacity, n = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local period, age = tonumber(ARGV[7]), tonumber(ARGV[8])
if alg == 3 then
  refundLog(key, n, period, age, now, slack)
  local r = slidinglog(key, rate, capacity, 0, period, now, slack, false)
  return reply1(1, r[2], 0, r[4], now)
end
local v = redis.call('GET', key)
local nv, ms, missed, decide
if alg == 0 then
  nv, ms = refundBucket(v, rate, capacity, n, now, slack)
  decide = bucket
elseif alg == 1 then
  nv, ms, missed = refundWindow(v, rate, capacity, n, period, age, tonumber(ARGV[9]), now, slack)
  if missed then
    return reply1(-2, 0, 0, 0, now)
  end
  decide = window
else
  nv, ms = refundSliding(v, n, period, age, now, slack)
  decide = swindow
end
if nv then
  redis.call('SET', key, nv, 'PX', px(ms))
  v = nv
end
local _, remaining, _, reset = decide(v, rate, capacity, 0, period, now, slack)
return reply1(1, remaining, 0, reset, now)
