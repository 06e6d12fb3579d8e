-- inflight.lua: the slots of an in-flight limit (inflight.go), one sorted
-- set per key: a slot's ID scored with the instant (ms, Redis's clock) its
-- lease ends. Expired leases, an instance's that died, are dropped first.
-- KEYS[1]  the key
-- KEYS[2]  its released IDs that were never held, scored with the end of
--          their memory: an Acquire that runs after its own release (the
--          two sent on different connections to a server that stalled)
--          takes nothing
-- ARGV[1]  "a" acquire, "n" renew, "r" release
-- ARGV[2]  the slot's ID
-- ARGV[3]  the limit (acquire)
-- ARGV[4]  the lease in ms (acquire, renew); how long a release of an ID
--          not held is remembered (release)
-- Returns {acquired or renewed (0|1), slots held}.
local key, released, op, id = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
redis.call('ZREMRANGEBYSCORE', released, '-inf', now)
local function keep(lease)
  if redis.call('PTTL', key) < lease then
    redis.call('PEXPIRE', key, lease)
  end
end
if op == 'a' then
  local n = redis.call('ZCARD', key)
  if n >= tonumber(ARGV[3]) or redis.call('ZSCORE', released, id) then
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
if redis.call('ZREM', key, id) == 0 then
  local memory = tonumber(ARGV[4])
  redis.call('ZADD', released, now + memory, id)
  if redis.call('PTTL', released) < memory then
    redis.call('PEXPIRE', released, memory)
  end
end
return {1, redis.call('ZCARD', key)}
