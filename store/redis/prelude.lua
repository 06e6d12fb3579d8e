-- prelude.lua: the start of every script, after its encoding line
-- (scripts.go composes every script from these files): the clock and the
-- encoding of replies.
--
-- Each GET-based algorithm's file (bucket.lua, window.lua, swindow.lua)
-- then defines a pure function
--   decide(v, rate, capacity, n, period, now, slack)
--     -> allowed (0|1), remaining, retry-after µs, reset-after µs, nv, px
-- v      the key's value (false: none)
-- rate   refill rate in tokens per second (a number)
-- capacity  Burst for the token bucket, Rate for the windows
-- n      the cost
-- period in µs
-- now    the clock in µs since the epoch; slack the ms added to expiries
-- nv, px the value that commits the take and its expiry in ms, or nil when
--        there is nothing to write (a denied take, n == 0)
-- Results are integers, as they stand once the take is committed; the
-- function reads and writes nothing, so the scripts commit a batch of
-- takes with one MGET and one SET per key. The sliding log (log.lua) works
-- on its ZSET directly.

-- struct, which packs the state and the reply as binary, is defined before
-- this file by the script's encoding line (scripts.go): Redis Lua's struct
-- library where the server has it (Redis, Valkey), nil where it has not
-- (miniredis, some Redis-compatible servers) or where the string encoding
-- is forced; both read the string encoding, the one earlier versions wrote.

local floor, ceil, byte = math.floor, math.ceil, string.byte

-- clock returns now in µs and the slack of expiries in ms. app is the
-- app's clock in µs or "": Redis TIME.
local function clock(app)
  -- Expiries are relative, so clocks that disagree never expire a key early;
  -- with the app's clock, a second more for app servers whose clocks differ.
  local now = tonumber(app)
  if now then
    return now, 1000
  end
  if app ~= '' then -- "now/slack": a test's clock that real time outruns
    local n, s = string.match(app, '^(%d+)/(%d+)$')
    if n then
      return tonumber(n), tonumber(s)
    end
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2]), 0
end

-- late reports whether a take with deadline d (µs in Redis's clock, or ""
-- for none) came after it: the caller gave up, and it takes nothing.
local function late(d, now)
  if d == '' then
    return false
  end
  d = tonumber(d)
  return d ~= nil and now > d
end

-- binary reports whether v is a state in the binary encoding: it starts
-- with the byte 1, which no string encoding (digits first) does.
local function binary(v)
  return struct ~= nil and byte(v, 1) == 1
end

-- reply encodes results, four integers per take, and now: one binary
-- string with struct (a signed byte and three int64 per take, then now as
-- an int64, little-endian), else a table of integers.
local function reply(results, now)
  if struct then
    results[#results + 1] = now
    return struct.pack('<' .. string.rep('bi8i8i8', (#results - 1) / 4) .. 'i8', unpack(results))
  end
  results[#results + 1] = now
  return results
end

-- reply1 is reply for one take, without the tables.
local function reply1(allowed, remaining, retry, reset, now)
  if struct then
    return struct.pack('<bi8i8i8i8', allowed, remaining, retry, reset, now)
  end
  return {allowed, remaining, retry, reset, now}
end

-- px is an expiry in ms as Redis reads it, never in exponent notation
-- (and cheaper to make than Redis's own conversion of a Lua number).
local function px(ms)
  return string.format('%.0f', ms)
end
