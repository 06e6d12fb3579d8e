-- onelog.lua: the end of the sliding log's one-take script, after
-- prelude.lua and log.lua; arguments and reply as in one.lua.
local now, slack = clock(ARGV[1])
if late(ARGV[7], now) then
  return reply1(-1, 0, 0, 0, now)
end
local r = slidinglog(KEYS[1], tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), tonumber(ARGV[6]), now, slack, true)
return reply1(r[1], r[2], r[3], r[4], now)
