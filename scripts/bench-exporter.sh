#!/usr/bin/env bash
# The exporter rows of make bench: one scrape of `ibtool exporter` against
# one collection of treydock/infiniband_exporter on the running fabric.
# Usage: scripts/bench-exporter.sh IBTOOL_BINARY SIMFAB_BINARY
# Needs a fabric with an SM (perfquery -G asks the SA for the LID):
# IBSIM_SOCKNAME, SIMFAB_DIR and SIM_HOST set, as bench.sh leaves them.
# Environment: BENCH_EXPORTER_HCA=0 leaves out the --collector.hca rows
# (the model then runs only the switches' perfqueries);
# BENCH_EXPORTER_RUNS (3) alternating runs of the model, each followed by
# BENCH_EXPORTER_RUNONCE (3) runs of --exporter.runonce, whose medians are
# compared (a runonce, about a second, moved from 0.75 to 1.6 s with the
# machine's moments where the model's 13 s moved by a tenth);
# BENCH_EXPORTER_SCRAPES (100) scrapes of a running exporter for its RSS;
# BENCH_INFINIBAND_EXPORTER, the path of an infiniband_exporter binary
# (built outside this repository, statically: CGO_ENABLED=0, so that the
# shim is preloaded into the tools it runs and not into it), times the
# real one too.
#
# The model of one infiniband_exporter collection is what its collectors
# run, command for command, under the shim: `ibnetdiscover --ports`, then
# for each switch with a cabled port `perfquery -l -x -G GUID PORTS` (the
# cabled ports, comma-separated), one at a time (--perfquery.max-concurrent
# defaults to 1); with --collector.hca the same for each HCA after the
# switches (the real exporter's registry runs its switch and HCA
# collectors at the same time, so there the model is the slower). Its --collector.switch.rcv-err-details (-E per port) and
# ibswinfo collectors are off by default and left out.
set -euo pipefail
bin=$(realpath "$1")
simfab=$(realpath "$2")
: "${IBSIM_SOCKNAME:?} ${SIMFAB_DIR:?} ${SIM_HOST:?}"
scrapes=${BENCH_EXPORTER_SCRAPES:-100}
runs=${BENCH_EXPORTER_RUNS:-3}
runonce=${BENCH_EXPORTER_RUNONCE:-3}
shim=$("$simfab" preload)
# On tmpfs where there is one, as bench.sh: the C tools build their fake
# sysfs (libumad2sim.so) in the working directory on every start.
tmp=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
exporter_pid=
cleanup() {
	[ -z "$exporter_pid" ] || { kill "$exporter_pid" 2>/dev/null && wait "$exporter_pid" 2>/dev/null; } || true
	rm -rf "$tmp"
}
trap cleanup EXIT

ibsim_pid=$(sed -n 's/.*"ibsimPid": *\([0-9]*\).*/\1/p' "$SIMFAB_DIR/fabric.json")
hz=$(getconf CLK_TCK)
# cpu PID prints the user and system CPU time of a process, in ticks.
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
secs() { awk -v t="$1" -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }'; }
rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

# The model as a script of its own, so that /usr/bin/time counts the CPU
# of every command it runs.
cat >"$tmp/model.sh" <<'MODEL'
#!/usr/bin/env bash
# model.sh OUT TYPE...: ibnetdiscover --ports, then perfquery -l -x -G for
# each device of each TYPE (SW, CA), as infiniband_exporter's collectors.
set -euo pipefail
out=$1
shift
ibnetdiscover --ports >"$out"
for type in "$@"; do
	# A port line is "TYPE LID PORT GUID WIDTH RATE - ..."; "???" as the
	# rate marks a port with no cable, which the exporter skips.
	awk -v type="$type" 'NF >= 6 && $1 == type && $6 != "???" {
		if (!($4 in ports)) { order[n++] = $4; ports[$4] = $3 } else ports[$4] = ports[$4] "," $3
	} END { for (i = 0; i < n; i++) print order[i], ports[order[i]] }' "$out" |
		while read -r guid ports; do
			perfquery -l -x -G "$guid" "$ports" >/dev/null
		done
done
MODEL
chmod +x "$tmp/model.sh"

# measure NAME CMD...: runs CMD once in $tmp (the shim leaves sys-<pid>
# there) and adds its wall time, CPU, ibsim's CPU meanwhile and max RSS to
# NAME's runs.
declare -A walls cpus icpus rsss
measure() {
	local name=$1 before after e u s m
	shift
	before=$(cpu "$ibsim_pid")
	(cd "$tmp" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err") ||
		{ echo "failed: $*" >&2; cat "$tmp/err" >&2; return 1; }
	after=$(cpu "$ibsim_pid")
	read -r e u s m <"$tmp/time"
	walls[$name]+="$e "
	cpus[$name]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') "
	icpus[$name]+="$(secs $((after - before))) "
	rsss[$name]+="$((m / 1024)) "
}

# median prints the median of the numbers in its arguments.
median() {
	printf '%s\n' "$@" | sort -g | awk 'NF { a[n++] = $1 } END { if (n % 2) print a[int(n / 2)]; else printf "%.2f\n", (a[n / 2 - 1] + a[n / 2]) / 2 }'
}

# row NAME: NAME's row: the medians of its runs' wall time, CPU and ibsim's
# CPU, the largest max RSS, and with more than one run their wall times.
declare -A wall
row() {
	local name=$1 rss
	# shellcheck disable=SC2086 # the lists split into numbers
	wall[$name]=$(median ${walls[$name]})
	# shellcheck disable=SC2086
	rss=$(printf '%s\n' ${rsss[$name]} | sort -n | tail -1)
	# shellcheck disable=SC2086
	printf '%-50s %8ss %8ss %8ss %8sMB%s\n' "$name" "${wall[$name]}" "$(median ${cpus[$name]})" \
		"$(median ${icpus[$name]})" "$rss" "$([ "$runs" -le 1 ] || echo "  (runs: $(echo ${walls[$name]} | sed 's/ /, /g') s)")"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 0.001; printf "%.1f", a / b }'; }

# freeport prints a loopback port no one listens on.
freeport() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}

# scrape_rows NAME ARGS...: starts `ibtool exporter ARGS` on a free port,
# waits for its first answer (discovery included), then times one scrape
# (wall by curl, the exporter's and ibsim's CPU from /proc, the sweep's
# time by the exporter's own collector_duration_seconds) and $scrapes
# more, reading the RSS after each: after the first, the least and most
# over the others, and after the last.
scrape_rows() {
	local name=$1 port url e c0 c1 i0 i1 r1 r rmin rmax t0 t1 sweep
	shift
	port=$(freeport)
	url="http://127.0.0.1:$port/metrics"
	(cd "$tmp" && exec "$bin" exporter --web.listen-address "127.0.0.1:$port" "$@" 2>"$tmp/exporter.err") &
	exporter_pid=$!
	for _ in $(seq 600); do
		curl -sf -o /dev/null "$url" && break
		kill -0 "$exporter_pid" 2>/dev/null || { echo "ibtool exporter exited:" >&2; cat "$tmp/exporter.err" >&2; return 1; }
		sleep 0.1
	done
	c0=$(cpu "$exporter_pid") i0=$(cpu "$ibsim_pid")
	e=$(curl -sf -o "$tmp/scrape.prom" -w '%{time_total}' "$url")
	c1=$(cpu "$exporter_pid") i1=$(cpu "$ibsim_pid")
	r1=$(rss_mb "$exporter_pid")
	wall[$name]=$e
	sweep=$(awk -F'[{} ]' '$1 == "infiniband_exporter_collector_duration_seconds" && $2 !~ /ibnetdiscover/ { gsub(/collector=|"/, "", $2); printf "%s%s %.2f s", s, $2, $NF; s = ", " }' "$tmp/scrape.prom")
	printf '%-50s %8.2fs %8ss %8ss %8sMB  (sweep %s)\n' "$name" "$e" "$(secs $((c1 - c0)))" "$(secs $((i1 - i0)))" "$r1" "$sweep"
	rmin=$r1 rmax=$r1
	t0=$(date +%s%N)
	for _ in $(seq "$scrapes"); do
		curl -sf -o /dev/null "$url"
		r=$(rss_mb "$exporter_pid")
		[ "$r" -ge "$rmin" ] || rmin=$r
		[ "$r" -le "$rmax" ] || rmax=$r
	done
	t1=$(date +%s%N)
	printf '%-50s %8.2fs mean; RSS %s MB after 1 scrape, %s to %s MB over %s more, %s MB after the last\n' "  $scrapes scrapes" \
		"$(awk -v d=$((t1 - t0)) -v n="$scrapes" 'BEGIN { printf "%.3f", d / n / 1e9 }')" "$r1" "$rmin" "$rmax" "$scrapes" "$r"
	kill "$exporter_pid"
	wait "$exporter_pid" 2>/dev/null || true
	exporter_pid=
}

nodes=$("$bin" ibnodes | wc -l)
echo
echo "== exporter: one collection of the fabric ($nodes nodes, attached at $SIM_HOST) against infiniband_exporter's"
printf '%-50s %9s %9s %9s %10s\n' "" wall cpu "ibsim cpu" "max RSS"
sets=("switches|SW|")
[ "${BENCH_EXPORTER_HCA:-1}" = 0 ] || sets+=("switches and HCAs|SW CA|--collector.hca")
have_exporter=1
if ! "$bin" exporter --help >/dev/null 2>&1; then
	have_exporter=
	echo "  ibtool has no exporter: its rows are left out"
fi
for set in "${sets[@]}"; do
	IFS='|' read -r label types flag <<<"$set"
	model="infiniband_exporter model ($label)" real="infiniband_exporter real ($label)"
	ours="ibtool exporter --exporter.runonce ($label)"
	# The model and ibtool in turn, so that both meet the same moments of
	# the machine's load.
	for _ in $(seq "$runs"); do
		# shellcheck disable=SC2086 # types and flag split into words
		measure "$model" env LD_PRELOAD="$shim" "$tmp/model.sh" "$tmp/ports.out" $types
		if [ -n "${BENCH_INFINIBAND_EXPORTER:-}" ]; then
			# shellcheck disable=SC2086
			measure "$real" env LD_PRELOAD="$shim" "$(realpath "$BENCH_INFINIBAND_EXPORTER")" \
				--exporter.runonce --exporter.output "$tmp/ie.prom" --exporter.lockfile "$tmp/ie.lock" --log.level=warn $flag
		fi
		if [ -n "$have_exporter" ]; then
			for _ in $(seq "$runonce"); do
				# shellcheck disable=SC2086
				measure "$ours" "$bin" exporter --exporter.runonce --exporter.output "$tmp/ours.prom" --exporter.lockfile "$tmp/ours.lock" $flag
			done
		fi
	done
	row "$model"
	if [ -n "${BENCH_INFINIBAND_EXPORTER:-}" ]; then
		row "$real"
		printf '  the model takes %s%% of the real exporter'"'"'s wall time\n' "$(awk -v m="${wall[$model]}" -v r="${wall[$real]}" 'BEGIN { printf "%.0f", 100 * m / r }')"
	fi
	[ -n "$have_exporter" ] || continue
	row "$ours"
	# shellcheck disable=SC2086
	scrape_rows "ibtool exporter HTTP scrape ($label)" $flag
	printf '  ratio %sx (runonce; medians of %s runs of the model, %s of ibtool), %sx (HTTP scrape of a running exporter)\n' \
		"$(ratio "${wall[$model]}" "${wall[$ours]}")" "$runs" "$((runs * runonce))" \
		"$(ratio "${wall[$model]}" "${wall["ibtool exporter HTTP scrape ($label)"]}")"
done
