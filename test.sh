#!/usr/bin/env bash
# test.sh runs `go test -race ./...` in every module of the repository (each
# directory with a go.mod), on its own, as a user gets it: without the
# go.work, so that a module's go.mod must hold everything its tests need.
# Arguments go to every go test (./test.sh -run TestX -v). benchmarks/ is
# left to its own script, benchmarks/ci.sh. Every module is tested even
# after one fails; the exit status says whether all passed.
set -uo pipefail
cd "$(dirname "$0")"
export GOWORK=off
failed=()
for mod in $(find . -name go.mod -not -path './benchmarks/*' | sort); do
	dir=$(dirname "$mod")
	echo "=== module $dir"
	(cd "$dir" && go test -race "$@" ./...) || failed+=("$dir")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: modules ${failed[*]}" >&2
	exit 1
fi
