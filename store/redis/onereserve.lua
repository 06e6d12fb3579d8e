-- onereserve.lua: the end of the script of a booking or a cancellation
-- sent alone, after prelude.lua and reserve.lua: one GET and at most one
-- SET.
-- KEYS[1]  the key
-- ARGV[1]  the app's clock in µs, or "": Redis TIME
-- ARGV[2]  the deadline in µs in Redis's clock, or "": none
-- ARGV[3]  "r" to book, "c" to cancel
-- ARGV[4] .. ARGV[6]  refill rate per second, capacity, tokens n
-- ARGV[7]  to book: the bound on the wait in ns; to cancel: the booking's
--          instant, its whole µs
-- ARGV[8]  to cancel: the rest of the booking's instant, in ns (0..999)
-- Returns, through reply1, one take's row (allowed, remaining, retry-after
-- µs or a booking's delay in ns, reset-after µs; allowed -1: late) and now.
local now, slack = clock(ARGV[1])
if late(ARGV[2], now) then
  return reply1(-1, 0, 0, 0, now)
end
local key = KEYS[1]
local rate, capacity, n, x = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local allowed, remaining, retry, reset, nv, ms = 1, 0, 0, 0, nil, nil
if ARGV[3] == 'c' then
  nv, ms = cancel(redis.call('GET', key), rate, capacity, n, x, tonumber(ARGV[8]), now, slack)
else
  allowed, remaining, retry, reset, nv, ms = book(redis.call('GET', key), rate, capacity, n, x, now, slack)
end
if nv then
  redis.call('SET', key, nv, 'PX', px(ms))
end
return reply1(allowed, remaining, retry, reset, now)
