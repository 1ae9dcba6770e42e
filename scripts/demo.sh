#!/usr/bin/env bash
# make demo: start the small example fabric (two switches, four HCAs), run
# a few tools with infiniband-diags and with ibtool side by side on it, and
# stop it. Usage: scripts/demo.sh [IBTOOL_BINARY]   (default bin/ibtool)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-bin/ibtool}")
tmp=$(mktemp -d)
go build -o "$tmp/simfab" ./scripts/simfab
eval "$("$tmp/simfab" start internal/simfabric/testdata/net.2sw2path4hca)"
trap '"$tmp/simfab" stop "$SIMFAB_DIR"; rm -rf "$tmp"' EXIT

for host in Hca1 Switch2; do
	echo "== ibtool ibstat (attached at $host)"
	SIM_HOST=$host "$bin" ibstat
done
echo "== ibtool ibstatus (attached at Hca1)"
SIM_HOST=Hca1 "$bin" ibstatus

same=0 total=0
echo "== ibtool smpquery nodedesc 0,1,3 (attached at Hca1: two hops by direct route)"
SIM_HOST=Hca1 "$bin" smpquery nodedesc 0,1,3
echo "== ibtool perfquery -x 3 1 (Switch2's port 1; traffic counters move with every MAD)"
SIM_HOST=Hca1 "$bin" perfquery -x 3 1
echo "== ibtool ibnetdiscover (attached at Hca1)"
SIM_HOST=Hca1 "$bin" ibnetdiscover
echo "== ibtool iblinkinfo --switches-only"
SIM_HOST=Hca1 "$bin" iblinkinfo --switches-only
echo "== ibtool ibnetdiscover --discovery sa -l (the fabric from four SA queries, no SMPs)"
SIM_HOST=Hca1 "$bin" ibnetdiscover --discovery sa -l
echo "== ibtool saquery NR nodeInfo.portGUID=0x100004 (python-rdma's MEMBER=VALUE form)"
SIM_HOST=Hca1 "$bin" saquery NR nodeInfo.portGUID=0x100004
echo "== ibtool ibnetdiscover --format dot (Graphviz)"
SIM_HOST=Hca1 "$bin" ibnetdiscover --format dot
echo "== a multicast group: Hca1, Hca2 and Hca4 join it (SA MCMemberRecord Set), opensm routes it"
mlid=$("$tmp/simfab" join ff12:601b:ffff::1:5 Hca1 Hca2 Hca4 | awk 'END { print $3 }')
sleep 0.5 # opensm programs the switches' MFTs after answering the joins

for tool in "ibstat" "ibstat -l" "ibstat -p" "ibstat ibsim0 1" \
	"smpquery nodeinfo 3" "smpquery -D nodedesc 0,1,3" "perfquery -E 2 1" \
	"ibnetdiscover -l" "ibnetdiscover -p" "iblinkinfo" "ibswitches" "dump_lfts" "smpquery -G nodeinfo 0x100004" \
	"saquery" "saquery -x" "saquery -D" "ibtracert -m $mlid 2 6" "dump_mfts"; do
	total=$((total + 1))
	echo "== $tool (at Hca1)"
	# shellcheck disable=SC2086 # split the tool and its arguments
	if "$tmp/simfab" diff -ibtool "$bin" --sim-host Hca1 -- $tool; then
		same=$((same + 1))
	fi
done
echo "$same of $total identical to infiniband-diags"
