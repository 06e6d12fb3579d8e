-- log.lua: the sliding log's decision, after prelude.lua, on its ZSET. Mirrors takeLog in
-- store/memory/slidinglog.go, in microseconds: at most Rate tokens within
-- any trailing period (now - period, now].
--
-- key  a ZSET of admitted requests: score = time (µs), member = "C:n", C the
--      running total of tokens admitted, zero-padded, so members never
--      collide, even within one microsecond. The decision reads only the
--      entries inside the window; a commit drops those that have left it.
local function slidinglog(key, rate, capacity, n, period, now, slack, commit)
  local clock, total, newest = now, 0, nil
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[1] then
    total = tonumber(string.match(last[1], '^(%d+)'))
    newest = tonumber(last[2])
    if now < newest then
      now = newest -- keep the log in time order
    end
  end
  -- the window: scores above now - period
  local from = '(' .. string.format('%.0f', now - period)

  -- tokens in the window: the running totals of its newest and oldest entries
  local sum = 0
  local first = redis.call('ZRANGEBYSCORE', key, from, '+inf', 'LIMIT', 0, 1)
  if first[1] then
    local c, k = string.match(first[1], '^(%d+):(%d+)$')
    sum = total - tonumber(c) + tonumber(k)
  end

  local allowed, retry = 0, 0
  if sum + n <= capacity then
    allowed = 1
    if n > 0 then
      total = total + n
      sum = sum + n
      newest = now
      if commit then
        redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - period))
        redis.call('ZADD', key, string.format('%.0f', now), string.format('%016.0f:%.0f', total, n))
        redis.call('PEXPIRE', key, string.format('%.0f', math.ceil((now + period - clock) / 1000) + slack))
      end
    end
  else
    -- wait until enough of the oldest entries have left
    local need = sum + n - capacity
    local entries = redis.call('ZRANGEBYSCORE', key, from, '+inf', 'WITHSCORES', 'LIMIT', 0, need)
    for i = 1, #entries, 2 do
      need = need - tonumber(string.match(entries[i], ':(%d+)$'))
      if need <= 0 then
        retry = tonumber(entries[i + 1]) + period - now
        break
      end
    end
  end
  local reset = 0
  if sum > 0 then
    reset = newest + period - now
  end
  return {allowed, math.max(capacity - sum, 0), retry, reset} -- a lowered limit: none left, never fewer
end

-- logTake decides and commits a take of n on the log at key, with the
-- other algorithms' results (it writes its ZSET itself: no value to write).
local function logTake(key, rate, capacity, n, period, now, slack)
  local r = slidinglog(key, rate, capacity, n, period, now, slack, true)
  return r[1], r[2], r[3], r[4]
end
