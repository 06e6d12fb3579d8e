package redisstore_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

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
// from INFO commandstats. BenchmarkBatchScriptRatio compares them.
func BenchmarkBatchScript(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	s := redisstore.New(c, redisstore.WithPrefix("bench-lua:"))
	redisstore.LoadScripts(s)
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	const batch = 32
	loads := batchScriptLoads(b, c, s, l, batch)
	for v, name := range []string{"batch.lua/32 takes", "least-work/32 takes", "batch.lua/8 AllowAlls of 4"} {
		b.Run(name, func(b *testing.B) {
			calls := loads[v]
			done := serverTime(b, c)
			for i := range b.N {
				if err := c.Do(ctx, calls[i%len(calls)]...).Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			done() // µs per call; the calls carry batch takes
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*batch), "wall-µs/take")
		})
	}
}

// batchScriptLoads are the calls of the three loads: batch.lua with lone
// takes, leastWorkBatchLua, and batch.lua with AllowAlls of 4 takes, each
// of batch takes a call over 10,000 keys (or clients).
func batchScriptLoads(b *testing.B, c *goredis.Client, s *redisstore.Store, l ratelimit.Limit, batch int) [3][][]any {
	keys := benchKeyNames()
	sha, err := c.ScriptLoad(context.Background(), leastWorkBatchLua).Result()
	if err != nil {
		b.Fatal(err)
	}
	var loads [3][][]any
	for j := range benchKeys / batch {
		var lone, all [][]string
		least := []any{"evalsha", sha, batch}
		for k := range batch {
			key := keys[(j*batch+k)%benchKeys]
			lone = append(lone, []string{key})
			least = append(least, "bench-least:"+key)
		}
		for k := range batch / 4 {
			// benchKeys/4 clients of 4 policies: as many keys as the lone
			// takes visit, so that Redis's memory touches them alike
			client := keys[(j*batch/4+k)%(benchKeys/4)]
			all = append(all, []string{"p1/" + client, "p2/" + client, "p3/" + client, "p4/" + client})
		}
		loads[0] = append(loads[0], redisstore.BatchCall(s, lone, l, 1))
		loads[1] = append(loads[1], append(least, strconv.Itoa(l.Rate), l.Rate))
		loads[2] = append(loads[2], redisstore.BatchCall(s, all, l, 1))
	}
	return loads
}

// BenchmarkBatchScriptRatio runs the three loads of BenchmarkBatchScript
// in interleaved rounds of 100 calls each, so that the machine's drift
// touches them alike, and reports the medians of the per-round ratios of
// their Redis time (INFO commandstats): batch.lua's lone takes against
// leastWorkBatchLua ("batch/least", the target is <= 1.5), and a take of
// an AllowAll of 4 against a lone take ("multi/lone", <= 1.0).
func BenchmarkBatchScriptRatio(b *testing.B) {
	c := benchClient(b)
	ctx := context.Background()
	s := redisstore.New(c, redisstore.WithPrefix("bench-lua:"))
	redisstore.LoadScripts(s)
	l := ratelimit.Limit{Rate: 1_000_000, Period: time.Second}
	const batch, round = 32, 100
	loads := batchScriptLoads(b, c, s, l, batch)
	usec := func() float64 {
		_, u := evalshaStats(b, c)
		return u
	}
	var perTake [3][]float64
	var ratio, multi []float64
	for i := range b.N {
		var took [3]float64
		for k := range loads {
			v := (i + k) % len(loads) // each load leads in turn
			u0 := usec()
			for j := range round {
				call := loads[v][(i*round+j)%len(loads[v])]
				if err := c.Do(ctx, call...).Err(); err != nil {
					b.Fatal(err)
				}
			}
			took[v] = (usec() - u0) / (round * batch)
			perTake[v] = append(perTake[v], took[v])
		}
		ratio = append(ratio, took[0]/took[1])
		multi = append(multi, took[2]/took[0])
	}
	b.ReportMetric(median(perTake[0]), "batch-µs/take")
	b.ReportMetric(median(perTake[1]), "least-µs/take")
	b.ReportMetric(median(perTake[2]), "multi-µs/take")
	b.ReportMetric(median(ratio), "batch/least")
	b.ReportMetric(median(multi), "multi/lone")
}

// evalshaStats reads the server's EVALSHA calls and µs spent in them so far.
func evalshaStats(b *testing.B, c *goredis.Client) (calls, usec float64) {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = f
			case "usec":
				usec = f
			}
		}
	}
	return calls, usec
}

// median is the median of xs (which it sorts), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}
