#!/usr/bin/env bash
# Times ibutils' ibdmchk against ibtool's on the routing dumps opensm writes
# (-D 0x43) for a fabric: one run each, wall and CPU time and memory, the
# ratio of the wall times, and whether the reports are identical (ibdmchk
# segfaults at exit, so only its report counts).
# Usage: scripts/bench-ibdmchk.sh IBTOOL SIMFAB NETFILE [opensm routing engine]
set -euo pipefail
bin=$1 simfab=$2 net=$3 routing=${4:-}
command -v ibdmchk >/dev/null || { echo "bench-ibdmchk: ibdmchk (ibutils) is not installed; skipped" >&2; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
eval "$("$simfab" start ${routing:+-routing "$routing"} -timeout 30m -opensm-arg=-D -opensm-arg=0x43 "$net" 2>/dev/null)"
cp "$SIMFAB_DIR/opensm-subnet.lst" "$SIMFAB_DIR/opensm.fdbs" "$SIMFAB_DIR/opensm.mcfdbs" "$tmp/"
"$simfab" stop "$SIMFAB_DIR"
lines=$(grep -c . "$tmp/opensm-subnet.lst")
echo
echo "== routing checks (ibdmchk) on opensm's dumps of $(basename "$net") ($lines links); one run each"
printf '%-30s %9s %9s %10s\n' tool wall cpu "max RSS"
declare -A wall
for who in ibdmchk ibtool; do
	case $who in
	ibdmchk) (cd "$tmp" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" ibdmchk -s opensm-subnet.lst -f opensm.fdbs -m opensm.mcfdbs >"$tmp/$who.out" 2>&1) || true ;;
	ibtool) (cd "$tmp" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$bin" ibdmchk -s opensm-subnet.lst -f opensm.fdbs -m opensm.mcfdbs >"$tmp/$who.out" 2>/dev/null) || true ;;
	esac
	# a command a signal ended adds a "Command terminated" line
	read -r e u s m < <(grep -v '^Command' "$tmp/time")
	wall[$who]=$e
	printf '%-30s %8ss %8ss %8sMB\n' "$who" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')" $((m / 1024))
done
same="identical reports"
cmp -s "$tmp/ibdmchk.out" "$tmp/ibtool.out" || same="REPORTS DIFFER"
printf 'ibtool ibdmchk is %sx faster than ibdmchk (wall time; %s)\n' \
	"$(awk -v a="${wall[ibdmchk]}" -v b="${wall[ibtool]}" 'BEGIN { if (b == 0) b = 0.001; printf "%.1f", a / b }')" "$same"
