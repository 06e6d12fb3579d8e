package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	redisstore "github.com/ratelimit-go/ratelimit/store/redis"
)

// leastWorkBatchLua is the least a batched token bucket can do per take:
// one TIME and one MGET for the batch, then per key a refill, a take of
// one token and a SET, the state binary, one limit for all, a byte per
// take in reply. BenchmarkBatchScript measures batch.lua against it.
const leastWorkBatchLua = `
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local rate, cap = tonumber(ARGV[1]), tonumber(ARGV[2])
local vals = redis.call('MGET', unpack(KEYS))
local out = {}
for i = 1, #KEYS do
  local last, tokens = now, cap
  local v = vals[i]
  if v then
    local _
    _, last, tokens = struct.unpack('<Bdd', v)
  end
  tokens = tokens + (now - last) / 1000000 * rate
  if tokens > cap then
    tokens = cap
  end
  local ok = 0
  if tokens >= 1 then
    tokens, ok = tokens - 1, 1
    redis.call('SET', KEYS[i], struct.pack('<Bdd', 1, now, tokens), 'PX', math.ceil((cap - tokens) / rate * 1000) + 1)
  end
  out[i] = ok
end
return struct.pack('<' .. string.rep('b', #KEYS), unpack(out))
`

// BenchmarkBatchScript is the Redis time per take of batch.lua called
// directly with batches of 32 token-bucket takes on 10,000 keys, against
// leastWorkBatchLua on the same keys, and of 8 AllowAlls of 4 takes each
// (a take of a multi-policy decision against a lone take): server-µs/take
// from INFO commandstats.
func BenchmarkBatchScript(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	s := redisstore.New(c, redisstore.WithPrefix("bench-lua:"))
	redisstore.LoadScripts(s)
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	keys := benchKeyNames()
	const batch = 32
	run := func(b *testing.B, call func(i int) []any) {
		done := serverTime(b, c)
		for i := range b.N {
			if err := c.Do(ctx, call(i)...).Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		done()
	}
	perTake := func(b *testing.B) {
		// serverTime reported µs per call; the calls carry batch takes
		b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*batch), "wall-µs/take")
	}
	b.Run("batch.lua/32 takes", func(b *testing.B) {
		calls := make([][]any, benchKeys/batch)
		for j := range calls {
			var bt [][]string
			for k := range batch {
				bt = append(bt, []string{keys[(j*batch+k)%benchKeys]})
			}
			calls[j] = redisstore.BatchCall(s, bt, l, 1)
		}
		run(b, func(i int) []any { return calls[i%len(calls)] })
		perTake(b)
	})
	b.Run("least-work/32 takes", func(b *testing.B) {
		sha, err := c.ScriptLoad(ctx, leastWorkBatchLua).Result()
		if err != nil {
			b.Fatal(err)
		}
		calls := make([][]any, benchKeys/batch)
		for j := range calls {
			args := []any{"evalsha", sha, batch}
			for k := range batch {
				args = append(args, "bench-least:"+keys[(j*batch+k)%benchKeys])
			}
			calls[j] = append(args, strconv.Itoa(l.Rate), l.Rate)
		}
		run(b, func(i int) []any { return calls[i%len(calls)] })
		perTake(b)
	})
	b.Run("batch.lua/8 AllowAlls of 4", func(b *testing.B) {
		calls := make([][]any, benchKeys/batch)
		for j := range calls {
			var bt [][]string
			for k := range batch / 4 {
				client := keys[(j*batch/4+k)%benchKeys]
				bt = append(bt, []string{"p1/" + client, "p2/" + client, "p3/" + client, "p4/" + client})
			}
			calls[j] = redisstore.BatchCall(s, bt, l, 1)
		}
		run(b, func(i int) []any { return calls[i%len(calls)] })
		perTake(b)
	})
}
