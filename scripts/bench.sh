#!/usr/bin/env bash
# make bench: codec micro-benchmarks (ns/op, allocations), then ibtool and
# infiniband-diags timed side by side on a simulated fat tree, with ratios.
# Usage: scripts/bench.sh [IBTOOL_BINARY]   (default bin/ibtool)
# Environment: BENCH_HOSTS (default 648: a full 2-level tree of 36-port
# switches), BENCH_RADIX (36), BENCH_RUNS (5 runs of each command);
# BENCH_DISCOVERY_HOSTS (default 27648: a 3-level fat tree of 48-port
# switches, 30,528 nodes) and BENCH_DISCOVERY_RADIX (48) for discovery,
# which runs once per tool on ibsim alone (no SM: DR discovery needs none);
# BENCH_FABRIC_HOSTS (default 4000) for the fabric-wide tools on a 3-level
# tree with opensm; BENCH_SA_DISCOVERY=0 skips the discovery of the big tree
# with opensm up (DR against ibtool's SA discovery); BENCH_EXPORTER=0 skips
# the exporter rows on the 3-level tree, BENCH_EXPORTER_HCA=0 their
# --collector.hca rows, and BENCH_INFINIBAND_EXPORTER=PATH times the real
# infiniband_exporter too (scripts/bench-exporter.sh); BENCH_IBDMCHK=0 skips
# the routing checks (ibutils' ibdmchk) on that tree's opensm dumps.
# BENCH_START_ONLY=1
# stops after the start-up rows (BENCH_START_RUNS runs each, default 21;
# the page cache is dropped before them where this runs as root, unless
# BENCH_DROP_CACHES=0);
# BENCH_BIG_ONLY=1 runs only the sections of the big tree (its discovery
# without and with opensm, and the routing checks on opensm's dumps).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-bin/ibtool}")
hosts=${BENCH_HOSTS:-648}
radix=${BENCH_RADIX:-36}
runs=${BENCH_RUNS:-5}

big_only=${BENCH_BIG_ONLY:-0}
if [ "$big_only" != 1 ]; then
	echo "== codec (pkg/mad) and dumps (pkg/madtext): decode, encode and dump, ns/op and allocations"
	go test -run '^$' -bench . -benchmem ./pkg/mad/ ./pkg/madtext/ | grep -E '^Benchmark' |
		awk '{printf "%-50s %10s ns/op %6s B/op %4s allocs/op\n", $1, $3, $5, $7}'
fi

# The work directory is on tmpfs where there is one: the C tools run in it
# under libumad2sim.so, which builds a fake sysfs tree there (./sys-PID,
# some 700 file system calls) on every start, and a real sysfs is in
# memory. On a disk-backed /tmp that tree alone took 20 ms a run.
tmp=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
go build -o "$tmp/simfab" ./scripts/simfab
go build -o "$tmp/startbench" ./scripts/startbench
# The C tools' LD_PRELOAD: the bench's RMPP layer, then the umad2sim shim.
shim=$("$tmp/simfab" preload)
SIMFAB_DIR=
gobin=
trap '[ -z "$SIMFAB_DIR" ] || "$tmp/simfab" stop "$SIMFAB_DIR"; rm -rf "$tmp" ${gobin:+"$gobin"}' EXIT
if [ "$big_only" != 1 ]; then
	"$tmp/simfab" fattree -levels 2 -hosts "$hosts" -radix "$radix" >"$tmp/fabric.net"
	eval "$("$tmp/simfab" start "$tmp/fabric.net")"
	export SIM_HOST=H-0001

	# ms runs a command $runs times and prints the mean wall time in ms.
	ms() {
		local start end
		start=$(date +%s%N)
		for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }; done
		end=$(date +%s%N)
		echo $(((end - start) / runs / 1000000))
	}

	leaf_lid=$("$bin" ibaddr -L 0,1 | awk '{print $3}')

	# Start-up (docs/bench.md, Start-up): ibtool --version against an empty Go
	# program and a small cobra program built the same way (cgo on, as bin/ibtool,
	# and CGO_ENABLED=0), then the single-target tools against infiniband-diags
	# under the plain libumad2sim.so shim, all a one-MAD C tool needs (the RMPP
	# layer of $shim slows one by about 45%), and what a Go program reaches
	# against the first of them (an empty one, the floor client, the
	# portinfo example); alternating runs, medians of wall, CPU and page
	# faults.
	start_rows() {
		local src="$tmp/startprog" srt=${BENCH_START_RUNS:-21}
		mkdir -p "$src/empty" "$src/emptycgo" "$src/cobra"
		printf 'package main\n\nfunc main() {}\n' >"$src/empty/main.go"
		printf 'package main\n\nimport "C"\n\nfunc main() {}\n' >"$src/emptycgo/main.go"
		printf 'package main\n\nimport (\n\t"os"\n\n\t"github.com/spf13/cobra"\n)\n\nfunc main() {\n\troot := &cobra.Command{Use: "small", Version: "1", Run: func(*cobra.Command, []string) {}}\n\troot.AddCommand(&cobra.Command{Use: "a", Run: func(*cobra.Command, []string) {}})\n\tif root.Execute() != nil {\n\t\tos.Exit(1)\n\t}\n}\n' >"$src/cobra/main.go"
		# Built inside the module (cobra's version is ibtool's), with make build's tags.
		local pkgdir=internal/zz_startbench_$$
		mkdir -p "$pkgdir" && cp -r "$src"/* "$pkgdir"/
		# The Go programs the rows compare go on the file system of $bin,
		# not on tmpfs: there a Go binary's start took 100 to 400 faults
		# more than the same file on ext4 (docs/bench.md, Start-up), which
		# flattered ibtool against them.
		gobin=$(mktemp -d -p "$(dirname "$bin")" .startbench.XXXXXX 2>/dev/null || mktemp -d -p /var/tmp)
		for p in empty emptycgo cobra; do go build -tags 'netgo,osusergo' -o "$gobin/$p" "./$pkgdir/$p"; done
		CGO_ENABLED=0 go build -tags 'netgo,osusergo' -o "$gobin/ibtool-static" .
		rm -rf "$pkgdir"
		# The floor of the tool rows: the least a Go program does to send
		# smpquery's MAD through the library (scripts/startbench/minclient),
		# and the library's portinfo example, which opens the port as a
		# program would (pkg/endport, ibdiag.conf, a signal catch); static.
		CGO_ENABLED=0 go build -tags 'netgo,osusergo' -o "$gobin/minclient" ./scripts/startbench/minclient
		(cd examples && CGO_ENABLED=0 go build -tags 'netgo,osusergo' -o "$gobin/portinfo" ./portinfo)
		echo
		# Every binary and library of the rows in one state: a Go binary
		# just written (go build's here, dpkg's on install) maps in fewer
		# faults than the same file read back from disk, the state a
		# reboot or memory pressure leaves (likely its large folios in the
		# page cache); on the PVM machine ibtool's tools took about 100
		# faults and a fifth of their time fewer right after go build
		# (docs/bench.md, Start-up). Dropped, each is read back on its
		# first run.
		if [ "${BENCH_DROP_CACHES:-1}" = 1 ] && [ -w /proc/sys/vm/drop_caches ]; then
			sync
			echo 1 >/proc/sys/vm/drop_caches
			echo "page cache dropped: the rows' binaries and libraries are read back from disk (BENCH_DROP_CACHES=0 keeps it)"
		fi
		# What the machine charges for a page's first write and a system
		# call: the start-up ratios of two machines compare only beside it.
		"$tmp/startbench" -probe
		echo "== start-up: medians of $srt alternating runs; x = reference / this (targets: --version x >= 0.67 against the empty cgo program, within 1.5 times it; tools x >= 1.0, level with infiniband-diags)"
		"$tmp/startbench" -runs "$srt" \
			"ibtool --version vs empty|$gobin/empty|$bin --version" \
			"ibtool --version vs empty cgo|$gobin/emptycgo|$bin --version" \
			"ibtool (static) --version vs empty|$gobin/empty|$gobin/ibtool-static --version" \
			"small cobra --version vs empty|$gobin/empty|$gobin/cobra --version"
		echo
		local pre="LD_PRELOAD=${shim##* }" rows=() c
		for c in "smpquery -D portinfo 0,1 1" "perfquery $leaf_lid 1" "sminfo" "ibaddr" "smpdump -D 0,1 0x15" "ibportstate -D 0,1 1 query"; do
			rows+=("$c|$pre $c|$bin $c")
		done
		# What a Go program pays on this machine against the C tool's whole
		# run, its MAD included: an empty static Go program, the floor
		# client on one processor, and the portinfo example (built above).
		rows+=("empty Go program vs smpquery|$pre smpquery -D portinfo 0,1 1|$gobin/empty")
		rows+=("Go client floor, 1 processor|$pre smpquery -D portinfo 0,1 1|GOMAXPROCS=1 $gobin/minclient")
		rows+=("static examples/portinfo 0,1 1|$pre smpquery -D portinfo 0,1 1|$gobin/portinfo 0,1 1")
		"$tmp/startbench" -runs "$srt" -dir "$tmp" "${rows[@]}"
	}
	start_rows
	if [ "${BENCH_START_ONLY:-0}" = 1 ]; then
		exit 0
	fi
	echo
	echo "== $hosts hosts, radix $radix, attached at H-0001; mean of $runs runs (wall time)"
	printf '%-40s %12s %12s %8s\n' command infiniband-diags ibtool ratio
	for cmd in "smpquery -D portinfo 0,1 1" "perfquery -x $leaf_lid 1" "ibroute -D 0,1" "ibroute -D 0,1,$((radix / 2 + 1))"; do
		# shellcheck disable=SC2086 # split the command into words
		ref=$(cd "$tmp" && LD_PRELOAD="$shim" ms $cmd)
		# shellcheck disable=SC2086
		ours=$(ms "$bin" $cmd)
		printf '%-40s %10s ms %10s ms %7sx\n' "$cmd" "$ref" "$ours" "$(awk -v a="$ref" -v b="$ours" 'BEGIN { if (b == 0) b = 1; printf "%.1f", a / b }')"
	done
	"$tmp/simfab" stop "$SIMFAB_DIR"

	# Fabric-wide tools on a 3-level fat tree with opensm (LIDs and routes).
	mhosts=${BENCH_FABRIC_HOSTS:-4000}
	"$tmp/simfab" fattree -levels 3 -hosts "$mhosts" -radix "$radix" >"$tmp/mid.net"
	eval "$("$tmp/simfab" start "$tmp/mid.net" 2>/dev/null)"
	echo
	echo "== fabric-wide tools: 3-level fat tree, $mhosts hosts, radix $radix; mean of $runs runs (wall time; identical output checked)"
	printf '%-40s %12s %12s %8s\n' command infiniband-diags ibtool ratio
	# Each entry is "infiniband-diags command|ibtool command" (the same when
	# there is no "|"); ibtool's --discovery sa reads the fabric from the SA.
	for pair in "ibnetdiscover" "ibnetdiscover -p" "ibswitches" "iblinkinfo" "ibqueryerrors" "dump_lfts" \
		"ibnetdiscover|ibnetdiscover --discovery sa" "iblinkinfo|iblinkinfo --discovery sa" \
		"ibqueryerrors|ibqueryerrors --discovery sa" "dump_lfts|dump_lfts --discovery sa" "saquery" "saquery -x"; do
		cmd=${pair%%|*}
		ourcmd=${pair#*|}
		# shellcheck disable=SC2086
		(cd "$tmp" && LD_PRELOAD="$shim" $cmd >"$tmp/ref.out" 2>&1)
		# shellcheck disable=SC2086
		"$bin" $ourcmd >"$tmp/ours.out" 2>&1
		same=""
		cmp -s <(grep -v '^# Topology file' "$tmp/ref.out") <(grep -v '^# Topology file' "$tmp/ours.out") || same=" (OUTPUT DIFFERS)"
		# shellcheck disable=SC2086
		ref=$(cd "$tmp" && LD_PRELOAD="$shim" ms $cmd)
		# shellcheck disable=SC2086
		ours=$(ms "$bin" $ourcmd)
		printf '%-40s %10s ms %10s ms %7sx%s\n' "$ourcmd" "$ref" "$ours" "$(awk -v a="$ref" -v b="$ours" 'BEGIN { if (b == 0) b = 1; printf "%.1f", a / b }')" "$same"
	done
	# ibtool exporter against infiniband_exporter on the same tree
	# (scripts/bench-exporter.sh; BENCH_EXPORTER=0 skips it).
	[ "${BENCH_EXPORTER:-1}" = 0 ] || scripts/bench-exporter.sh "$bin" "$tmp/simfab"
	"$tmp/simfab" stop "$SIMFAB_DIR"

	# Routing checks: ibutils' ibdmchk against ibtool's on opensm's dumps of
	# the same tree (scripts/bench-ibdmchk.sh; BENCH_IBDMCHK=0 skips it).
	[ "${BENCH_IBDMCHK:-1}" = 0 ] || scripts/bench-ibdmchk.sh "$bin" "$tmp/simfab" "$tmp/mid.net"
	SIMFAB_DIR=
fi

# Discovery of a big fabric: wall and CPU time, memory, SMPs sent, and the
# CPU ibsim spent answering them; one run of each tool.
dhosts=${BENCH_DISCOVERY_HOSTS:-27648}
dradix=${BENCH_DISCOVERY_RADIX:-48}
"$tmp/simfab" fattree -levels 3 -hosts "$dhosts" -radix "$dradix" >"$tmp/big.net"
eval "$("$tmp/simfab" start -no-sm "$tmp/big.net" 2>/dev/null)"
ibsim_pid=$(sed -n 's/.*"ibsimPid": *\([0-9]*\).*/\1/p' "$SIMFAB_DIR/fabric.json")
ibsim_cpu() { awk '{ print $14 + $15 }' "/proc/$ibsim_pid/stat"; }
hz=$(getconf CLK_TCK)
echo
echo "== discovery of a 3-level fat tree, $dhosts hosts, radix $dradix, no SM; attached at H-00001; one run each"
printf '%-18s %9s %9s %9s %10s %12s\n' tool wall cpu "ibsim cpu" "max RSS" "SMPs"
declare -A wall
for who in infiniband-diags ibtool; do
	before=$(ibsim_cpu)
	if [ "$who" = ibtool ]; then
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" env SIM_HOST=H-00001 "$bin" ibnetdiscover -m >"$tmp/$who.out"
	else
		(cd "$tmp" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" env SIM_HOST=H-00001 LD_PRELOAD="$shim" ibnetdiscover -m >"$tmp/$who.out")
	fi
	after=$(ibsim_cpu)
	read -r e u s m <"$tmp/time"
	wall[$who]=$e
	smps=$(sed -n 's/^# Total MADs used: //p' "$tmp/$who.out")
	printf '%-18s %8ss %8ss %8ss %8sMB %12s\n' "$who" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" \
		"$(awk -v t=$((after - before)) -v hz="$hz" 'BEGIN { printf "%.2f", t / hz }')" $((m / 1024)) "$smps"
done
if diff <(grep -v '^# \(Topology file\|Total MADs\)' "$tmp/infiniband-diags.out") <(grep -v '^# \(Topology file\|Total MADs\)' "$tmp/ibtool.out") >/dev/null; then
	same="identical topology"
else
	same="TOPOLOGIES DIFFER"
fi
printf 'ratio %sx (%s)\n' "$(awk -v a="${wall[infiniband-diags]}" -v b="${wall[ibtool]}" 'BEGIN { if (b == 0) b = 0.001; printf "%.1f", a / b }')" "$same"

# The same tree with an SM (opensm's ftree routing: about 4.5 minutes to
# bring up 27,648 hosts; BENCH_SA_DISCOVERY=0 skips this): infiniband-diags'
# directed-route discovery against ibtool's, and ibtool's from the SA's
# records (four SubnAdmGetTable queries), whose MAD count is the queries and
# the ACKs of their RMPP segments.
if [ "${BENCH_SA_DISCOVERY:-1}" != 0 ]; then
	"$tmp/simfab" stop "$SIMFAB_DIR"
	eval "$("$tmp/simfab" start -routing ftree -timeout 30m -opensm-arg=-D -opensm-arg=0x43 "$tmp/big.net" 2>/dev/null)"
	echo
	echo "== discovery of the same tree with opensm up (ftree); one run each"
	printf '%-30s %9s %9s %10s %12s\n' tool wall cpu "max RSS" "MADs sent"
	for who in infiniband-diags ibtool ibtool-sa; do
		case $who in
		infiniband-diags) (cd "$tmp" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" env SIM_HOST=H-00001 LD_PRELOAD="$shim" ibnetdiscover -m >"$tmp/$who.out") ;;
		ibtool) /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" env SIM_HOST=H-00001 "$bin" ibnetdiscover -m >"$tmp/$who.out" ;;
		ibtool-sa) /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" env SIM_HOST=H-00001 "$bin" ibnetdiscover -m --discovery sa >"$tmp/$who.out" ;;
		esac
		read -r e u s m <"$tmp/time"
		wall[$who]=$e
		printf '%-30s %8ss %8ss %8sMB %12s\n' "$who" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" $((m / 1024)) \
			"$(sed -n 's/^# Total MADs used: //p' "$tmp/$who.out")"
	done
	for who in ibtool ibtool-sa; do
		if diff <(grep -v '^# \(Topology file\|Total MADs\)' "$tmp/infiniband-diags.out") <(grep -v '^# \(Topology file\|Total MADs\)' "$tmp/$who.out") >/dev/null; then
			same="identical topology"
		else
			same="TOPOLOGIES DIFFER"
		fi
		printf '%s: ratio %sx (%s)\n' "$who" "$(awk -v a="${wall[infiniband-diags]}" -v b="${wall[$who]}" 'BEGIN { if (b == 0) b = 0.001; printf "%.1f", a / b }')" "$same"
	done
	# The routing checks of the big tree on the dumps opensm wrote (-D
	# 0x43, as bench-ibdmchk.sh; the dumps are some 10 GB): ibtool's only, as
	# ibutils' ibdmchk would take about 48 times its 4,000-host time
	# (paths grow with the square of the hosts); the target is a minute.
	echo
	echo "== routing checks (ibtool ibdmchk) on opensm's dumps of the same tree; one run"
	(cd "$SIMFAB_DIR" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$bin" ibdmchk -s opensm-subnet.lst -f opensm.fdbs -m opensm.mcfdbs >"$tmp/bigcheck.out" 2>&1) || true
	read -r e u s m < <(grep -v '^Command' "$tmp/time")
	printf '%-30s %8ss %8ss %8sMB  %s\n' "ibtool ibdmchk" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" $((m / 1024)) \
		"$(awk -v e="$e" 'BEGIN { print (e <= 60 ? "within a minute" : "OVER A MINUTE") }')"
	grep -E '^-I- (Scanned|[Nn]o credit loops)|^-E- ' "$tmp/bigcheck.out" | head -5
fi
