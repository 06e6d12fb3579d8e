#!/usr/bin/env bash
# ci.sh: builds the benchmarks module, checks that every library limits at
# the budget it is given, and runs every benchmark once (-benchtime 1x, small
# key counts) so that a broken suite fails CI. No timing is asserted.
# RATELIMIT_REDIS_ADDR, when set, must name a redis-server that answers: the
# Redis suites then run against it and fail if it does not; unset, they skip.
set -euo pipefail

cd "$(dirname "$0")"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

if [ -z "${RATELIMIT_REDIS_ADDR:-}" ]; then
	echo "ci.sh: RATELIMIT_REDIS_ADDR is not set: the Redis suites skip" >&2
fi
test -z "$(gofmt -l .)" || { echo "ci.sh: gofmt needed:" >&2; gofmt -l . >&2; exit 1; }
go vet ./...
go test -count=1 ./...
go test -count=1 -run '^$' -bench . -benchtime 1x ./ -args -many-keys 1000 -bytes-keys 1000 | tee "$out"
# The report must still read what the suites print.
go run ./cmd/report -raw "$out" -svg /dev/null >/dev/null
