-- reference.lua: the plain token bucket of the course material ratelimit
-- starts from, the baseline of the Redis suite. The app's clock in seconds;
-- the refill is floored and the timestamp moves to now on every call.
--
-- KEYS[1]  a HASH: tokens, ts (seconds)
-- ARGV     capacity, rate (tokens per second), now (seconds), requested
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local requested = tonumber(ARGV[4])

local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1]) or capacity
local ts = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.floor((now - ts) * rate))

local allowed = 0
if tokens >= requested then
  tokens = tokens - requested
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', now)
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) * 2)
return {allowed, tokens}
