#!/usr/bin/env bash
# test.sh runs `go test -race ./...` in every module of the repository (each
# directory with a go.mod), on its own, as a user gets it: without the
# go.work, so that a module's go.mod must hold everything its tests need.
# Arguments go to every go test (./test.sh -run TestX -v). benchmarks/ is
# left to its own script, benchmarks/ci.sh. Every module is tested even
# after one fails; the exit status says whether all passed.
#
# Two modules are tested at once (TEST_JOBS=1 for one at a time), the
# largest first, so that one module's linking and waiting overlap another's
# tests; each module's output is printed whole, under its "=== module"
# line, as soon as it and the modules before it are done.
#
# GORACE defaults to atexit_sleep_ms=0: the race detector otherwise sleeps
# a second at the end of every test binary, for goroutines still running
# after the last test; a race within a test fails that test either way.
set -uo pipefail
cd "$(dirname "$0")"
export GOWORK=off
export GORACE="${GORACE:-atexit_sleep_ms=0}"
jobs=${TEST_JOBS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The root module and store/redis take the longest: start them first.
modules=()
for dir in . ./store/redis $(find . -name go.mod -not -path './benchmarks/*' -exec dirname {} \; | sort); do
	case " ${modules[*]} " in *" $dir "*) continue ;; esac
	[ -f "$dir/go.mod" ] && modules+=("$dir")
done

failed=()
printed=0
# print_done prints, in order, the modules that have finished and have no
# unfinished module before them.
print_done() {
	while [ "$printed" -lt "${#modules[@]}" ] && [ -f "$out/$printed.rc" ]; do
		echo "=== module ${modules[$printed]}"
		cat "$out/$printed.log"
		[ "$(cat "$out/$printed.rc")" = 0 ] || failed+=("${modules[$printed]}")
		printed=$((printed + 1))
	done
}

for i in "${!modules[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
		print_done
	done
	(
		cd "${modules[$i]}" && go test -race "$@" ./... >"$out/$i.log" 2>&1
		echo $? >"$out/$i.rc.tmp" && mv "$out/$i.rc.tmp" "$out/$i.rc"
	) &
done
wait
print_done
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: modules ${failed[*]}" >&2
	exit 1
fi
