#!/usr/bin/env bash
# Runs every fuzz target in the module for the given time each (default 60s).
# go test -fuzz takes one target in one package at a time, so list them first.
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
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
n=0
while read -r pkg; do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		n=$((n + 1))
		echo "fuzz $pkg $target ($fuzztime)"
		run=(go test -run='^$' -fuzz="^${target}\$" -fuzzminimizetime=1s -timeout=10m "$pkg")
		if "${run[@]}" -fuzztime="$fuzztime" >"$log" 2>&1; then
			continue
		fi
		if ! grep -q 'Failing input written' "$log" && grep -q 'context deadline exceeded' "$log"; then
			execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
			execs=${execs:-0}
			((execs >= 1000)) || execs=1000
			echo "fuzz $pkg $target: Go's fuzzer ended on its own deadline (go.dev/issue/75804); again for ${execs} executions"
			if "${run[@]}" -fuzztime="${execs}x" >"$log" 2>&1; then
				continue
			fi
		fi
		cat "$log"
		status=1
	done
done < <(go list ./...)
echo "$n fuzz targets run for $fuzztime each"
exit $status
