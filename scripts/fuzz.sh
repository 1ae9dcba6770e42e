#!/usr/bin/env bash
# Runs every fuzz target in the module for the given time each (default 60s).
# Usage: scripts/fuzz.sh [FUZZTIME [PACKAGES...]]   (packages default to ./...)
# go test -fuzz takes one target in one package at a time, so list them first.
# Each package's test binary is built once, instrumented for fuzzing (go
# test -c -fuzz), and run once per target as go test would run it (in the
# package's directory, with its fuzz cache): go test would link it again
# for every target, a second or more of each target's run.
#
# Two things keep a time-boxed run honest on a small, busy machine:
#   - Minimizing a new interesting input is capped at one second. Go's
#     default is 60s, and in a package whose test binary is large (cmd)
#     one minimization takes longer than the whole run: the workers report
#     nothing meanwhile and the run ends mid-call.
#   - Go 1.26's fuzzer can end a time-boxed run with a bare "context
#     deadline exceeded" and no failing input (go.dev/issue/75804, fixed in
#     Go 1.27). Such a target runs again with a budget of executions, the
#     count the first run reached, which has no deadline to race; a hang
#     there ends in the test timeout and fails. A real finding always
#     writes its input and fails at once.
set -euo pipefail
fuzztime=${1:-60s}
shift || true
[ $# -gt 0 ] || set -- ./...
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/log
fuzzcache=$(go env GOCACHE)/fuzz
status=0
n=0
while read -r pkg dir; do
	targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
	[ -n "$targets" ] || continue
	bin=$work/fuzz.test
	go test -c -fuzz=. -o "$bin" "$pkg"
	for target in $targets; do
		n=$((n + 1))
		echo "fuzz $pkg $target ($fuzztime)"
		run=("$bin" -test.run='^$' -test.fuzz="^${target}\$" -test.fuzzminimizetime=1s -test.timeout=10m
			-test.paniconexit0 -test.fuzzcachedir="$fuzzcache/$pkg")
		if (cd "$dir" && "${run[@]}" -test.fuzztime="$fuzztime") >"$log" 2>&1; then
			continue
		fi
		if ! grep -q 'Failing input written' "$log" && grep -q 'context deadline exceeded' "$log"; then
			execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
			execs=${execs:-0}
			((execs >= 1000)) || execs=1000
			echo "fuzz $pkg $target: Go's fuzzer ended on its own deadline (go.dev/issue/75804); again for ${execs} executions"
			if (cd "$dir" && "${run[@]}" -test.fuzztime="${execs}x") >"$log" 2>&1; then
				continue
			fi
		fi
		cat "$log"
		status=1
	done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' "$@")
echo "$n fuzz targets run for $fuzztime each"
exit $status
