#!/usr/bin/env bash
# run.sh: every suite, every library, on this machine, into RESULTS.md,
# results.svg and results.txt (the raw samples, for benchstat) beside this
# script, and the benchmark table of the project README.
#
#   bash benchmarks/run.sh              # COUNT=5 rounds, BENCHTIME=200ms, SLOW_BENCHTIME=1s, REDIS_BENCHTIME=30000x, REDIS_PASSES=1
#   COUNT=10 BENCHTIME=500ms bash benchmarks/run.sh
#   SUITES=redis COUNT=3 bash benchmarks/run.sh   # only the Redis suites (the report then has only them)
#
# It starts its own redis-server and a Redis Cluster of 3 masters on free
# loopback ports (and stops exactly those processes on the way out), builds
# the suites once, runs them in COUNT interleaved rounds (each round turns
# the order of the libraries, so that no library always runs first),
# measures the heap per key one library per process, profiles ours (and
# redis-server, with perf when it is installed) where it matters,
# summarises with benchstat and writes the report. Everything it makes
# lives in a fresh temporary directory until the report is moved into
# place, and a second run on one machine waits for the first to finish:
# two at once would measure each other.
set -euo pipefail

# The whole script is one block, read before it runs: editing this file
# during a run cannot change what the run does.
{
cd "$(dirname "$0")"
# benchmarks/ is a module of its own, outside the development go.work.
export GOWORK=off
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-200ms}
# The suites that swing most with the machine's load (100k keys) average
# over a longer time per sample; the Redis rows run a fixed count of
# decisions each (0.3 to 1 s here).
SLOW_BENCHTIME=${SLOW_BENCHTIME:-1s}
REDIS_BENCHTIME=${REDIS_BENCHTIME:-30000x}
REDIS_PASSES=${REDIS_PASSES:-1}
SUITES=${SUITES:-memory redis}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

for tool in go redis-server redis-cli; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool not found (redis-server and redis-cli: apt-get install redis-server)" >&2; exit 1; }
done
want() { case " $SUITES " in *" $1 "*) return 0 ;; esac; return 1; }

# One run at a time per machine.
if command -v flock >/dev/null; then
	exec 9>"${TMPDIR:-/tmp}/ratelimit-bench.lock"
	flock -n 9 || { echo "run.sh: another run is in progress; waiting for it" >&2; flock 9; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ratelimit-bench.XXXXXX")
pids=()
perf_pid=
cleanup() {
	[ -z "$perf_pid" ] || kill -INT "$perf_pid" 2>/dev/null || true
	# Exactly the servers this script started, by process id.
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_redis starts a redis-server of our own on a free loopback port
# below 32768 whose cluster bus port (port + 10000) is free too, and sets
# port and pid. A port another process takes first makes redis-server exit,
# and we try another; the server that answers must be ours (its process
# id), not a neighbour's.
start_redis() { # extra redis-server arguments...
	local p
	port=
	for _ in $(seq 30); do
		p=$((12000 + RANDOM % 10000))
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || (exec 3<>"/dev/tcp/127.0.0.1/$((p + 10000))") 2>/dev/null; then
			continue
		fi
		mkdir -p "$work/redis-$p"
		redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no \
			--dir "$work/redis-$p" --logfile "$work/redis-$p/log" --daemonize no "$@" &
		pid=$!
		pids+=("$pid")
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			if redis-cli -p "$p" info server 2>/dev/null | grep -q "^process_id:$pid"; then
				port=$p
				return
			fi
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	echo "run.sh: could not start redis-server on a free port" >&2
	exit 1
}

if want redis; then
	start_redis
	redis_pid=$pid
	export RATELIMIT_REDIS_ADDR=127.0.0.1:$port
	nodes=()
	for _ in 1 2 3; do
		start_redis --cluster-enabled yes --cluster-config-file nodes.conf
		nodes+=("127.0.0.1:$port")
	done
	redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$work/cluster-create.log"
	for node in "${nodes[@]}"; do
		for _ in $(seq 100); do
			redis-cli -p "${node##*:}" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
			sleep 0.1
		done
		redis-cli -p "${node##*:}" cluster info | grep -q '^cluster_state:ok' || { echo "run.sh: the cluster did not come up" >&2; exit 1; }
	done
	export RATELIMIT_REDIS_CLUSTER_ADDRS=$(IFS=,; echo "${nodes[*]}")
	echo "run.sh: redis-server pid $redis_pid on $RATELIMIT_REDIS_ADDR; cluster on $RATELIMIT_REDIS_CLUSTER_ADDRS" >&2
fi

go test -c -o "$work/bench.test" .
bench() { "$work/bench.test" -test.run '^$' "$@"; }

raw=$work/raw.txt
mkdir -p "$work/cmdstats" "$work/profiles"
libs=$(go run ./cmd/report -list-peers)
start=$(date +%s)
for round in $(seq "$COUNT"); do
	rot=$((round - 1))
	echo "run.sh: round $round of $COUNT" >&2
	if want memory; then
		bench -test.bench '^Benchmark(HotKeySerial|HotKeyParallel|Middleware|Gin|Echo)$' \
			-test.benchtime "$BENCHTIME" -rotate "$rot" | tee -a "$raw" >&2
		bench -test.bench '^BenchmarkManyKeys$' -test.cpu 1,2 -test.benchtime "$SLOW_BENCHTIME" -rotate "$rot" | tee -a "$raw" >&2
	fi
	if want redis; then
		# A fixed count per row (no ramp: the framework runs b.N=1, then the
		# count), so rows of one cell run back to back within seconds.
		# REDIS_PASSES > 1 runs more passes per round, each turning the
		# order again: more samples, longer runs.
		for pass in $(seq "$REDIS_PASSES"); do
			bench -test.bench '^Benchmark(Redis|RedisCluster)$' -test.benchtime "$REDIS_BENCHTIME" \
				-rotate "$((rot * REDIS_PASSES + pass - 1))" -cmdstats "$work/cmdstats" | tee -a "$raw" >&2
		done
	fi
	if want memory; then
		# One library per process: what one leaves in the runtime would
		# count against the next.
		for lib in $libs; do
			bench -test.bench "^BenchmarkBytesPerKey\$/^lib=$lib\$" -test.benchtime 1x | tee -a "$raw" >&2
		done
	fi
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
if want memory; then
	profile hotkey '^BenchmarkHotKeySerial$/^lib=ours$'
	profile manykeys '^BenchmarkManyKeys$/^lib=ours$' -test.cpu 2
	profile middleware '^BenchmarkMiddleware$/^lib=ours$'
fi
if want redis; then
	# The server's side at the same time, when perf may attach to it.
	if command -v perf >/dev/null && perf record -q -F 999 -p "$redis_pid" -o "$work/redis.perf" -- sleep 0.1 >/dev/null 2>&1; then
		perf record -q -F 999 -p "$redis_pid" -o "$work/redis.perf" >/dev/null 2>&1 &
		perf_pid=$!
	fi
	profile redis '^BenchmarkRedis$/^allowed$/^g=64$/^lib=ours-tb$'
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
		perf_pid=
		# Debian's redis-server is a link to redis-check-rdb: name it as run.
		{
			echo "By object:"
			perf report -i "$work/redis.perf" --stdio --sort dso 2>/dev/null | grep -v -e '^#' -e '^$' | head -8
			echo
			echo "By function (self time, 0.5% and up):"
			perf report -i "$work/redis.perf" --stdio --sort dso,symbol --percent-limit 0.5 2>/dev/null |
				grep -v -e '^#' -e '^$' | sed -e 's/ *- *- *$//' -e 's/ *$//' | head -40
		} | sed 's/redis-check-rdb/redis-server   /' >"$work/profiles/redis-server.txt" || true
	fi
fi

# benchstat, one table per suite, libraries as columns (the first column,
# the first library the suite ran in round 1, is its base).
if (for suite in HotKeySerial HotKeyParallel ManyKeys BytesPerKey Middleware Gin Echo Redis RedisCluster; do
	grep -q "^Benchmark$suite/" "$raw" || continue
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
	echo "| redis-server | $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), on loopback, no persistence; the Cluster: 3 masters, no replicas, on the same machine |"
	echo "| Redis clients | a go-redis client per library and goroutine count: default options, PoolSize the goroutine count (at least go-redis's default, 10 per core); the Limiter's row with ContextTimeoutEnabled, as docs/redis.md recommends |"
	# The library's last commit, not the benchmarks'.
	if commit=$(git -C "$root" log -1 --format='%h %s' -- . ':(exclude)benchmarks' ':(exclude)README.md' 2>/dev/null) && [ -n "$commit" ]; then
		dirty=
		git -C "$root" diff --quiet HEAD -- . ':(exclude)benchmarks' ':(exclude)README.md' 2>/dev/null || dirty=" (with uncommitted changes)"
		echo "| ratelimit | $commit$dirty |"
	fi
	echo "| rounds | $COUNT, interleaved, -benchtime $BENCHTIME ($SLOW_BENCHTIME for 100k keys, $REDIS_BENCHTIME for Redis, $REDIS_PASSES passes per round; heap per key: one process per library and round); suites: $SUITES |"
	echo "| peers | $(go list -m -f '{{.Path}} {{.Version}}' github.com/go-chi/httprate github.com/ulule/limiter/v3 github.com/go-redis/redis_rate/v10 github.com/sethvargo/go-limiter github.com/throttled/throttled/v2 github.com/didip/tollbooth/v7 github.com/labstack/echo/v4 github.com/gin-gonic/gin golang.org/x/time github.com/redis/go-redis/v9 | paste -sd, - | sed 's/,/, /g') |"
	echo
	echo "The machine is shared with other builds: read the ratios, not the absolute numbers, and the ± column for how steady a row was."
} >"$work/meta.md"

go run ./cmd/report -raw "$raw" "${benchstat_flag[@]}" -meta "$work/meta.md" -notes NOTES.md \
	-profiles "$work/profiles" -cmdstats "$work/cmdstats" -svg "$work/results.svg" \
	-readme "$work/readme.md" -rounds "$COUNT" >"$work/RESULTS.md"
grep -v '^redis: ' "$raw" >"$work/results.txt" || true

# The README's table, between its markers, from the same report.
begin='<!-- benchmarks: written by benchmarks/run.sh from RESULTS.md -->'
end='<!-- benchmarks: end -->'
if grep -qxF "$begin" "$root/README.md" && grep -qxF "$end" "$root/README.md"; then
	awk -v begin="$begin" -v end="$end" -v table="$work/readme.md" '
		$0 == begin { print; while ((getline line < table) > 0) print line; skip = 1; next }
		$0 == end { skip = 0 }
		!skip { print }
	' "$root/README.md" >"$work/README.md"
	mv "$work/README.md" "$root/README.md"
else
	echo "run.sh: README.md has no benchmark markers; its table is not updated" >&2
fi
mv "$work/results.svg" results.svg
mv "$work/results.txt" results.txt
mv "$work/RESULTS.md" RESULTS.md
echo "run.sh: wrote RESULTS.md, results.svg, results.txt and the README's table" >&2
exit 0
}
