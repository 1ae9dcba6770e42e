#!/usr/bin/env bash
# Runs every fuzz target in the module for the given time each (default 60s).
# go test -fuzz takes one target in one package at a time, so list them first.
set -euo pipefail
fuzztime=${1:-60s}
cd "$(dirname "$0")/.."
status=0
n=0
while read -r pkg; do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		n=$((n + 1))
		echo "fuzz $pkg $target ($fuzztime)"
		if ! go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/ibtool-fuzz.log 2>&1; then
			# Go's fuzzer sometimes ends a time-boxed run with "context
			# deadline exceeded" and no failing input (the clock ran out
			# while a worker was busy, more so on a loaded machine): run
			# that target once more. A real finding writes its input.
			if ! grep -q 'Failing input written' /tmp/ibtool-fuzz.log && grep -q 'context deadline exceeded' /tmp/ibtool-fuzz.log; then
				echo "fuzz $pkg $target: the fuzzer's clock ran out mid-run; again"
				go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/ibtool-fuzz.log 2>&1 && continue
			fi
			cat /tmp/ibtool-fuzz.log
			status=1
		fi
	done
done < <(go list ./...)
echo "$n fuzz targets run for $fuzztime each"
exit $status
