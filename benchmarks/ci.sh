#!/usr/bin/env bash
# ci.sh: builds the benchmarks module, checks that every library limits at
# the budget it is given, and runs every benchmark once (-benchtime 1x, small
# key counts) so that a broken suite fails CI. No timing is asserted.
# RATELIMIT_REDIS_ADDR and RATELIMIT_REDIS_CLUSTER_ADDRS, when set, must name
# a redis-server and a Redis Cluster that answer: the Redis suites then run
# against them and fail if they do not; unset, they skip.
set -euo pipefail

cd "$(dirname "$0")"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

if [ -z "${RATELIMIT_REDIS_ADDR:-}" ]; then
	echo "ci.sh: RATELIMIT_REDIS_ADDR is not set: the Redis suites skip" >&2
fi
if [ -z "${RATELIMIT_REDIS_CLUSTER_ADDRS:-}" ]; then
	echo "ci.sh: RATELIMIT_REDIS_CLUSTER_ADDRS is not set: the Cluster suite skips" >&2
fi
test -z "$(gofmt -l .)" || { echo "ci.sh: gofmt needed:" >&2; gofmt -l . >&2; exit 1; }
go vet ./...
go test -count=1 ./...
go test -count=1 -run '^$' -bench . -benchtime 1x ./ -args -many-keys 1000 -bytes-keys 1000 -redis-keys 1000 | tee "$out"
# The report must still read what the suites print.
go run ./cmd/report -raw "$out" -svg /dev/null -readme /dev/null >/dev/null
