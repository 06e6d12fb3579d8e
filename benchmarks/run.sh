#!/usr/bin/env bash
# run.sh: every suite, every library, on this machine, into RESULTS.md,
# results.svg and results.txt (the raw samples, for benchstat) beside this
# script.
#
#   bash benchmarks/run.sh              # COUNT=5 rounds, BENCHTIME=200ms, SLOW_BENCHTIME=1s
#   COUNT=10 BENCHTIME=500ms bash benchmarks/run.sh
#
# It starts its own redis-server on a free loopback port (and stops exactly
# that process on the way out), builds the suites once, runs them in COUNT
# interleaved rounds (each round turns the order of the libraries, so that no
# library always runs first), measures the heap per key one library per
# process, profiles ours where it matters, summarises with benchstat and
# writes the report. Everything it makes lives in a fresh temporary
# directory until the report is moved into place, so two runs on one
# machine do not meet.
set -euo pipefail

# The whole script is one block, read before it runs: editing this file
# during a run cannot change what the run does.
{
cd "$(dirname "$0")"
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-200ms}
# The suites that swing most with the machine's load (100k keys, Redis)
# average over a longer time per sample.
SLOW_BENCHTIME=${SLOW_BENCHTIME:-1s}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

for tool in go redis-server redis-cli; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (redis-server and redis-cli: apt-get install redis-server)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/ratelimit-bench.XXXXXX")
redis_pid=
cleanup() {
	if [ -n "$redis_pid" ]; then
		kill "$redis_pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$redis_pid" 2>/dev/null || true
		wait "$redis_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A redis-server of our own on a free loopback port below 32768: a port
# another process holds makes redis-server exit, and we try another. The
# server that answers must be ours (its process id), not a neighbour's.
port=
for _ in $(seq 30); do
	p=$((20000 + RANDOM % 12768))
	redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$work" --logfile "$work/redis.log" --daemonize no &
	redis_pid=$!
	for _ in $(seq 50); do
		kill -0 "$redis_pid" 2>/dev/null || break
		if redis-cli -p "$p" info server 2>/dev/null | grep -q "^process_id:$redis_pid"; then
			port=$p
			break 2
		fi
		sleep 0.1
	done
	kill "$redis_pid" 2>/dev/null || true
	wait "$redis_pid" 2>/dev/null || true
	redis_pid=
done
[ -n "$port" ] || { echo "run.sh: could not start redis-server on a free port" >&2; exit 1; }
export RATELIMIT_REDIS_ADDR=127.0.0.1:$port
echo "run.sh: redis-server pid $redis_pid on $RATELIMIT_REDIS_ADDR" >&2

go test -c -o "$work/bench.test" .
bench() { "$work/bench.test" -test.run '^$' "$@"; }

raw=$work/raw.txt
mkdir -p "$work/cmdstats" "$work/profiles"
libs=$(go run ./cmd/report -list-peers)
start=$(date +%s)
for round in $(seq "$COUNT"); do
	rot=$((round - 1))
	echo "run.sh: round $round of $COUNT" >&2
	bench -test.bench '^Benchmark(HotKeySerial|HotKeyParallel|Middleware|Gin|Echo)$' \
		-test.benchtime "$BENCHTIME" -rotate "$rot" | tee -a "$raw" >&2
	bench -test.bench '^BenchmarkManyKeys$' -test.cpu 1,2 -test.benchtime "$SLOW_BENCHTIME" -rotate "$rot" | tee -a "$raw" >&2
	bench -test.bench '^Benchmark(RedisSerial|RedisParallel)$' \
		-test.benchtime "$SLOW_BENCHTIME" -rotate "$rot" -cmdstats "$work/cmdstats" | tee -a "$raw" >&2
	# One library per process: what one leaves in the runtime would count
	# against the next.
	for lib in $libs; do
		bench -test.bench "^BenchmarkBytesPerKey\$/^lib=$lib\$" -test.benchtime 1x | tee -a "$raw" >&2
	done
done
echo "run.sh: rounds took $(( $(date +%s) - start ))s" >&2

# Profiles of ours, for the notes on what bounds each target.
profile() { # name, benchmark pattern, extra flags...
	local name=$1 pattern=$2
	shift 2
	bench -test.bench "$pattern" -test.benchtime 2s -test.cpuprofile "$work/$name.prof" "$@" >/dev/null
	go tool pprof -top -nodecount 20 "$work/bench.test" "$work/$name.prof" 2>/dev/null |
		grep -v -e '^File:' -e '^Build ID:' -e '^Time:' >"$work/profiles/$name.txt" || true
}
profile hotkey '^BenchmarkHotKeySerial$/^lib=ours$'
profile manykeys '^BenchmarkManyKeys$/^lib=ours$' -test.cpu 2
profile middleware '^BenchmarkMiddleware$/^lib=ours$'
profile redis '^BenchmarkRedisParallel$/^lib=ours-tb$'

# benchstat, one table per suite, libraries as columns (the first column,
# the first library the suite ran in round 1, is its base).
if (for suite in HotKeySerial HotKeyParallel ManyKeys BytesPerKey Middleware Gin Echo RedisSerial RedisParallel; do
	echo "== $suite"
	go run "$BENCHSTAT" -filter ".name:$suite" -col /lib "$raw" || exit 1
	echo
done) >"$work/benchstat.txt" 2>"$work/benchstat.err"; then
	benchstat_flag=(-benchstat "$work/benchstat.txt")
else
	echo "run.sh: benchstat did not run:" >&2
	cat "$work/benchstat.err" >&2
	benchstat_flag=()
fi

root=$(cd .. && pwd)
{
	echo "## Machine and run"
	echo
	echo "| | |"
	echo "|---|---|"
	echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
	echo "| CPU | $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') |"
	echo "| cores (nproc) | $(nproc) |"
	echo "| Go | $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH) |"
	echo "| redis-server | $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), on loopback, no persistence |"
	# The library's last commit, not the benchmarks'.
	if commit=$(git -C "$root" log -1 --format='%h %s' -- . ':(exclude)benchmarks' 2>/dev/null) && [ -n "$commit" ]; then
		dirty=
		git -C "$root" diff --quiet HEAD -- . ':(exclude)benchmarks' 2>/dev/null || dirty=" (with uncommitted changes)"
		echo "| ratelimit | $commit$dirty |"
	fi
	echo "| rounds | $COUNT, interleaved, -benchtime $BENCHTIME ($SLOW_BENCHTIME for 100k keys and Redis; heap per key: one process per library and round) |"
	echo "| peers | $(go list -m -f '{{.Path}} {{.Version}}' github.com/go-chi/httprate github.com/ulule/limiter/v3 github.com/go-redis/redis_rate/v10 github.com/sethvargo/go-limiter github.com/throttled/throttled/v2 github.com/didip/tollbooth/v7 github.com/labstack/echo/v4 github.com/gin-gonic/gin golang.org/x/time github.com/redis/go-redis/v9 | paste -sd, - | sed 's/,/, /g') |"
	echo
	echo "The machine is shared with other builds: read the ratios, not the absolute numbers, and the ± column for how steady a row was."
} >"$work/meta.md"

go run ./cmd/report -raw "$raw" "${benchstat_flag[@]}" -meta "$work/meta.md" -notes NOTES.md \
	-profiles "$work/profiles" -cmdstats "$work/cmdstats" -svg "$work/results.svg" >"$work/RESULTS.md"
grep -v '^redis: ' "$raw" >"$work/results.txt" || true
mv "$work/results.svg" results.svg
mv "$work/results.txt" results.txt
mv "$work/RESULTS.md" RESULTS.md
echo "run.sh: wrote RESULTS.md, results.svg and results.txt" >&2
exit 0
}
