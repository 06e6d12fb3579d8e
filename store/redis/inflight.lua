-- inflight.lua: the slots of an in-flight limit (inflight.go), one sorted
-- set per key: a slot's ID scored with the instant (ms, Redis's clock) its
-- lease ends. Expired leases, an instance's that died, are dropped first.
-- KEYS[1]  the key
-- ARGV[1]  "a" acquire, "n" renew, "r" release
-- ARGV[2]  the slot's ID
-- ARGV[3]  the limit (acquire)
-- ARGV[4]  the lease in ms (acquire, renew)
-- Returns {acquired or renewed (0|1), slots held}.
local key, op, id = KEYS[1], ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local function keep(lease)
  if redis.call('PTTL', key) < lease then
    redis.call('PEXPIRE', key, lease)
  end
end
if op == 'a' then
  local n = redis.call('ZCARD', key)
  if n >= tonumber(ARGV[3]) then
    return {0, n}
  end
  local lease = tonumber(ARGV[4])
  redis.call('ZADD', key, now + lease, id)
  keep(lease)
  return {1, n + 1}
elseif op == 'n' then
  -- XX: a lease that expired is not taken again, its slot may be another's
  local lease = tonumber(ARGV[4])
  local ok = redis.call('ZADD', key, 'XX', 'CH', now + lease, id)
  if redis.call('ZSCORE', key, id) then
    ok = 1
    keep(lease)
  end
  return {ok, redis.call('ZCARD', key)}
end
redis.call('ZREM', key, id)
return {1, redis.call('ZCARD', key)}
