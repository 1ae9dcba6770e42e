# rdma_bw -R and -z (sourced by guest-test.sh): perftest's rdma_cm
# exchange, ibtool's rdma_bw against perftest's ib_write_bw both ways,
# each end with its own device on one end of a veth pair (veth_up), on
# Soft-RoCE and, where perftest's -R works there, on Soft-iWARP; the
# bandwidth of ibtool's client against ib_write_bw's own (best of
# BWCM_RUNS each, up to BWCM_MORE more rounds while under the target);
# the faults (an
# address nobody has, a port nobody listens on, a peer killed mid-run)
# end with one clear line and exit 3, and no CM ID is left after any
# step. It prints its guest time at the end.
bwcm_t0=$(date +%s)
BWCM_A=198.51.100.1
BWCM_B=198.51.100.2
BWCM_SIZE=${BWCM_SIZE:-65536}
# 3000 iterations of 64 KiB, as 20-rdma_bw.sh: with 1000 (3 s a run)
# ib_write_bw's own runs ranged over 2x in one check (15.9 to 30.6 MB/s),
# and the best of six of ibtool's client read 0.81 to 0.83 of its best in
# two whole runs of 2026-12-03 where the medians of the two clients were
# 0.80 and 1.00 of each other; with 3000 the first two rounds read 17.7
# and 18.6 MB/s for each. The target, 0.8 as 20-rdma_bw.sh's, catches a
# data path that lost a fifth; emulated, the clients are not told apart
# more finely.
BWCM_ITERS=${BWCM_ITERS:-3000}
BWCM_RUNS=${BWCM_RUNS:-2}
BWCM_MORE=${BWCM_MORE:-4}
BWCM_MIN=${BWCM_MIN:-0.8}
mkdir -p "$H/out"
# /dev/infiniband/rdma_cm (70-rdmacm.sh loads it too).
modprobe rdma_ucm

# bwcm_pair NAME PORT SERVER_CMD... -- CLIENT_CMD...: the server (which
# gets -p PORT) in the background, the client (-p PORT and the server's
# address); outputs in /tmp/NAME.srv and .cli (stdout and stderr),
# statuses in bwcm_srv_rc and bwcm_cli_rc; non-zero when either failed.
bwcm_pair() {
	name=$1
	port=$2
	shift 2
	srv=""
	while [ "$1" != "--" ]; do
		srv="$srv $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	timeout "${bwcm_timeout:-60}" $srv -p "$port" >"/tmp/$name.srv" 2>&1 &
	bwcm_srv=$!
	wait_cm_listen "$port" || echo "(no CM ID listened on $port)" >>"/tmp/$name.srv"
	timeout "${bwcm_timeout:-60}" "$@" -p "$port" $BWCM_B >"/tmp/$name.cli" 2>&1
	bwcm_cli_rc=$?
	wait $bwcm_srv
	bwcm_srv_rc=$?
	cp "/tmp/$name.srv" "/tmp/$name.cli" "$H/out/" 2>/dev/null
	[ $bwcm_cli_rc -eq 0 ] && [ $bwcm_srv_rc -eq 0 ]
}

# bwcm_retry NAME PORT SERVER_CMD... -- CLIENT_CMD...: bwcm_pair, run
# again (on the next port, up to 4 tries in all) while a failed try's
# failure is perftest's own report: under emulation its CPU frequency
# estimate fails now and then ("Correlation coefficient r^2: 0.85 < 0.9",
# "Can't produce a report", exit 1): on siw ib_write_bw's own -b pair
# ended so in 2 of 4 tries. Which side reports depends on the options
# (the client; with -b the server too), so both are looked at.
bwcm_retry() {
	name=$1
	port=$2
	shift 2
	for try in 1 2 3 4; do
		bwcm_pair "$name" $((port + 100 * (try - 1))) "$@" && return 0
		grep -q "Can't produce a report" "/tmp/$name.srv" "/tmp/$name.cli" || return 1
		echo "  ($name, try $try: perftest could not report: $(grep -h -m1 'Correlation coefficient' "/tmp/$name.srv" "/tmp/$name.cli" | head -1))"
		no_cm_ids "$name, try $try"
	done
	return 1
}

# bwcm_avg FILE: the BW average column of the report line.
bwcm_avg() { awk '/#bytes/ { getline; print $4; exit }' "$1"; }

# bwcm_ok WHAT NAME: pass when both sides of pair NAME exited 0 and the
# client printed a report line.
bwcm_ok() {
	if [ "$bwcm_srv_rc" -eq 0 ] && [ "$bwcm_cli_rc" -eq 0 ] && [ -n "$(bwcm_avg "/tmp/$2.cli")" ]; then
		pass "$1: both exit 0, $(bwcm_avg "/tmp/$2.cli") MB/sec"
	else
		fail "$1: server exit $bwcm_srv_rc, client exit $bwcm_cli_rc (124: timed out)"
		tail -n 6 "/tmp/$2.srv" "/tmp/$2.cli" | sed 's/^/    /'
	fi
}

# bwcm_interop DEV OPT PORT: ibtool's rdma_bw OPT (-R or -z) against
# ib_write_bw OPT, each side once, and both writing. With -z perftest's
# QP is on -d's device (the first one, rxe0, without it), not on the
# exchange's address's: each side is given its end's device.
# shellcheck disable=SC2086
bwcm_interop() {
	dev=$1
	opt=$2
	port=$3
	ds="-d ${dev}bw1"
	dc="-d ${dev}bw0"
	bwcm_retry "bwcm-$dev$opt-srv" "$port" "$IBTOOL" rdma_bw "$opt" $ds -s 4096 -n 1000 -- ib_write_bw "$opt" $dc -s 4096 -n 1000
	bwcm_ok "rdma_bw $opt $dev: ibtool's server with ib_write_bw's client" "bwcm-$dev$opt-srv"
	no_cm_ids "rdma_bw -R: ibtool's rdma_bw $opt server"
	bwcm_retry "bwcm-$dev$opt-cli" $((port + 1)) ib_write_bw "$opt" $ds -s 4096 -n 1000 -- "$IBTOOL" rdma_bw "$opt" $dc -s 4096 -n 1000
	bwcm_ok "rdma_bw $opt $dev: ibtool's client with ib_write_bw's server" "bwcm-$dev$opt-cli"
	no_cm_ids "rdma_bw -R: ibtool's rdma_bw $opt client"
	# With -b perftest's server prints a report too.
	bwcm_retry "bwcm-$dev$opt-bidir" $((port + 2)) ib_write_bw "$opt" $ds -s 4096 -n 1000 -b -- "$IBTOOL" rdma_bw "$opt" $dc -s 4096 -n 1000 -b
	bwcm_ok "rdma_bw $opt -b $dev: ibtool's client with ib_write_bw's server, both ways" "bwcm-$dev$opt-bidir"
	no_cm_ids "rdma_bw -R: ibtool's rdma_bw $opt -b client"
}

step "rdma_bw -R: Soft-RoCE (rxe) on each end of a veth pair"
veth_up cmveth0 cmveth1 $BWCM_A $BWCM_B
rdma link add rxebw0 type rxe netdev cmveth0
rdma link add rxebw1 type rxe netdev cmveth1
bwcm_interop rxe -R 18710
grep -q 'rdma_cm QPs	 : ON' /tmp/bwcm-rxe-R-srv.srv && grep -q 'Waiting for client rdma_cm QP to connect' /tmp/bwcm-rxe-R-srv.srv &&
	pass "rdma_bw -R server's settings say rdma_cm QPs ON, data exchange rdma_cm" ||
	fail "rdma_bw -R server's settings: $(grep -E 'rdma_cm|Data ex' /tmp/bwcm-rxe-R-srv.srv | tr '\n' ' ')"
# The report's lines as perftest's client prints them over rdma_cm, the
# figures aside (the field names of each line; perftest's PCIe relax
# order and ibv_wr* API lines are not rdma_bw's).
bwcm_shape() { sed -e '/PCIe relax order\|ibv_wr\* API/d' -e 's/0x[0-9a-f]*/H/g; s/[0-9][0-9.]*/N/g; s/ *$//' "$1"; }
if bwcm_shape /tmp/bwcm-rxe-R-srv.cli >/tmp/bwcm-shape.pt &&
	bwcm_shape /tmp/bwcm-rxe-R-cli.cli >/tmp/bwcm-shape.ib &&
	cmp -s /tmp/bwcm-shape.pt /tmp/bwcm-shape.ib; then
	pass "rdma_bw -R client's report has the lines of ib_write_bw -R's"
else
	fail "rdma_bw -R client's report differs from ib_write_bw -R's in shape"
	diff /tmp/bwcm-shape.pt /tmp/bwcm-shape.ib | head -10
fi
# All sizes and duration mode against ib_write_bw's server.
bwcm_retry bwcm-rxe-R-all 18716 ib_write_bw -R -d rxebw1 -a -n 5 -- "$IBTOOL" rdma_bw -R -a -n 5
if [ "$bwcm_srv_rc" -eq 0 ] && [ "$bwcm_cli_rc" -eq 0 ] && [ "$(grep -c '^ [0-9]' /tmp/bwcm-rxe-R-all.cli)" -eq 23 ]; then
	pass "rdma_bw -R -a -n 5 with ib_write_bw -R -a's server: 23 sizes, the server printed $(grep '^ [0-9]' /tmp/bwcm-rxe-R-all.srv | awk '{ print $1 }')'s line"
else
	fail "rdma_bw -R -a -n 5: server exit $bwcm_srv_rc, client exit $bwcm_cli_rc"
	tail -n 5 /tmp/bwcm-rxe-R-all.srv /tmp/bwcm-rxe-R-all.cli
fi
no_cm_ids "rdma_bw -R: rdma_bw -R -a"
bwcm_retry bwcm-rxe-R-dur 18717 ib_write_bw -R -d rxebw1 -D 2 -- "$IBTOOL" rdma_bw -R -D 2
bwcm_ok "rdma_bw -R -D 2 with ib_write_bw -R -D 2's server" bwcm-rxe-R-dur
no_cm_ids "rdma_bw -R: rdma_bw -R -D 2"
bwcm_interop rxe -z 18720

# Bandwidth: ibtool's client and ib_write_bw's, each against
# ib_write_bw's server, taking turns; the best of each.
best_ib=0
best_pt=0
runs_ib=""
runs_pt=""
n=0
bwcm_run() {
	tag=$1
	shift
	if bwcm_pair "bwcm-bw-$tag$n" $((18730 + n)) ib_write_bw -R -s "$BWCM_SIZE" -n "$BWCM_ITERS" -F -- "$@" -R -s "$BWCM_SIZE" -n "$BWCM_ITERS" -F; then
		v=$(bwcm_avg "/tmp/bwcm-bw-$tag$n.cli")
		grep -q 'Correlation coefficient' "/tmp/bwcm-bw-$tag$n.cli" && v="$v(no-CPU-frequency)"
	else
		v=failed
		tail -n 5 "/tmp/bwcm-bw-$tag$n.srv" "/tmp/bwcm-bw-$tag$n.cli" >&2
	fi
	echo "$v"
}
bwcm_round() {
	n=$((n + 1))
	if [ $((n % 2)) -eq 1 ]; then
		a=$(bwcm_run ib "$IBTOOL" rdma_bw)
		b=$(bwcm_run pt ib_write_bw)
	else
		b=$(bwcm_run pt ib_write_bw)
		a=$(bwcm_run ib "$IBTOOL" rdma_bw)
	fi
	runs_ib="$runs_ib $a"
	runs_pt="$runs_pt $b"
	best_ib=$(awk -v x="$best_ib" -v y="$a" 'BEGIN { y += 0; print (y > x) ? y : x }')
	best_pt=$(awk -v x="$best_pt" -v y="$b" 'BEGIN { y += 0; print (y > x) ? y : x }')
	ratio=$(awk -v a="$best_ib" -v b="$best_pt" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "0" }')
}
bwcm_short() { awk -v r="$ratio" -v m="$BWCM_MIN" 'BEGIN { exit !(r < m) }'; }
while [ $n -lt "$BWCM_RUNS" ]; do
	bwcm_round
done
while bwcm_short && [ $n -lt $((BWCM_RUNS + BWCM_MORE)) ]; do
	echo "ratio $ratio after $n rounds is under $BWCM_MIN: one more round"
	bwcm_round
done
echo "rdma_bw -R client runs (MB/sec):$runs_ib"
echo "ib_write_bw -R client runs (MB/sec):$runs_pt"
if ! bwcm_short; then
	pass "rdma_bw -R bandwidth -s $BWCM_SIZE -n $BWCM_ITERS against ib_write_bw -R's server: ibtool $best_ib MB/sec, ib_write_bw $best_pt MB/sec, ratio $ratio (best of $n; target $BWCM_MIN)"
else
	fail "rdma_bw -R bandwidth -s $BWCM_SIZE -n $BWCM_ITERS: ibtool $best_ib MB/sec, ib_write_bw $best_pt MB/sec, ratio $ratio (best of $n) is under $BWCM_MIN"
fi
no_cm_ids "rdma_bw -R: the bandwidth runs"
echo "--- one ibtool -R client report:"
cat /tmp/bwcm-bw-ib1.cli

# Faults: one line on stderr, exit 3, no CM ID left.
fails_cleanly "rdma_bw -R address nobody has" 3 rdma_bw -R 198.51.100.99
no_cm_ids "rdma_bw -R: rdma_bw -R to an address nobody has"
fails_cleanly "rdma_bw -R port nobody listens on" 3 rdma_bw -R -p 18799 $BWCM_B
no_cm_ids "rdma_bw -R: rdma_bw -R to a port nobody listens on"
# A peer killed mid-run: ibtool's client whose ib_write_bw server dies
# (over Soft-RoCE the writes to a dead QP neither complete nor fail: the
# client watches the CM's disconnect), and ibtool's server whose
# client dies.
bwcm_kill() {
	what=$1
	victim=$2
	shift 2
	srv=""
	while [ "$1" != "--" ]; do
		srv="$srv $1"
		shift
	done
	shift
	# No timeout wrapper: the kill must reach the program itself.
	# shellcheck disable=SC2086
	$srv -p 18790 >/tmp/bwcm-kill.srv 2>&1 &
	k_srv=$!
	wait_cm_listen 18790 || echo "(no CM ID listened on 18790)" >>/tmp/bwcm-kill.srv
	"$@" -p 18790 $BWCM_B >/tmp/bwcm-kill.cli 2>&1 &
	k_cli=$!
	wait_for_line /tmp/bwcm-kill.cli 'remote address' || echo "(the client had no remote address after 30 s)" >>/tmp/bwcm-kill.cli
	sleep 1
	if [ "$victim" = server ]; then
		kill -9 $k_srv
		wait $k_srv 2>/dev/null
		out=/tmp/bwcm-kill.cli
		t0=$(cut -d' ' -f1 /proc/uptime)
		(sleep 30 && kill $k_cli 2>/dev/null) &
		guard=$!
		wait $k_cli
		rc=$?
	else
		kill -9 $k_cli
		wait $k_cli 2>/dev/null
		out=/tmp/bwcm-kill.srv
		t0=$(cut -d' ' -f1 /proc/uptime)
		(sleep 30 && kill $k_srv 2>/dev/null) &
		guard=$!
		wait $k_srv
		rc=$?
	fi
	kill $guard 2>/dev/null
	took=$(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')
	cp /tmp/bwcm-kill.srv "$H/out/bwcm-kill-$victim.srv"
	cp /tmp/bwcm-kill.cli "$H/out/bwcm-kill-$victim.cli"
	if [ $rc -eq 3 ] && grep -q "disconnected during the test" $out; then
		pass "$what: exit $rc after ${took}s, $(tail -1 $out)"
	else
		fail "$what: exit $rc after ${took}s"
		tail -5 $out
	fi
	no_cm_ids "rdma_bw -R: $what"
}
bwcm_kill "rdma_bw -R client whose ib_write_bw server was killed mid-run" server \
	ib_write_bw -R -s 65536 -n 20000 -- "$IBTOOL" rdma_bw -R -s 65536 -n 20000
bwcm_kill "rdma_bw -R server whose client was killed mid-run" client \
	"$IBTOOL" rdma_bw -R -s 65536 -n 20000 -- "$IBTOOL" rdma_bw -R -s 65536 -n 20000
rdma link delete rxebw0
rdma link delete rxebw1
veth_down cmveth0 cmveth1

step "rdma_bw -R: Soft-iWARP (siw) on each end of a veth pair"
if modprobe siw 2>/tmp/siw.modprobe; then
	veth_up cmveth0 cmveth1 $BWCM_A $BWCM_B
	rdma link add siwbw0 type siw netdev cmveth0
	rdma link add siwbw1 type siw netdev cmveth1
	# perftest against itself first: where it cannot, ibtool is not
	# asked to. Its client connects the data QP as soon as the server
	# has answered the handshake before it, which can be before the
	# server listens again; on the refusal it tries again, and that try
	# crashes (seen on siw: "Connection refused", then a segmentation
	# fault, the server waiting on): so perftest gets a second go.
	bwcm_timeout=20
	for try in 1 2; do
		bwcm_pair bwcm-siw-self $((18750 + try)) ib_write_bw -R -s 4096 -n 1000 -- ib_write_bw -R -s 4096 -n 1000 && break
		echo "  ib_write_bw -R on siw against itself, try $try: server exit $bwcm_srv_rc, client exit $bwcm_cli_rc: $(tail -n 2 /tmp/bwcm-siw-self.cli | tr '\n' ' ')"
		no_cm_ids "rdma_bw -R: ib_write_bw -R on siw, try $try"
	done
	bwcm_timeout=60
	if [ $bwcm_srv_rc -eq 0 ] && [ $bwcm_cli_rc -eq 0 ]; then
		pass "ib_write_bw -R on siw against itself: $(bwcm_avg /tmp/bwcm-siw-self.cli) MB/sec"
		no_cm_ids "rdma_bw -R: ib_write_bw -R on siw"
		bwcm_interop siw -R 18760
	else
		echo "  ib_write_bw -R on siw fails against itself (server exit $bwcm_srv_rc, client exit $bwcm_cli_rc):"
		tail -n 4 /tmp/bwcm-siw-self.srv /tmp/bwcm-siw-self.cli | sed 's/^/    /'
		no_cm_ids "rdma_bw -R: ib_write_bw -R on siw"
		bwcm_pair bwcm-siw-ib 18765 "$IBTOOL" rdma_bw -R -s 4096 -n 1000 -- "$IBTOOL" rdma_bw -R -s 4096 -n 1000
		bwcm_ok "rdma_bw -R on siw, ibtool on both ends" bwcm-siw-ib
		no_cm_ids "rdma_bw -R: rdma_bw -R on siw"
	fi
	rdma link delete siwbw0
	rdma link delete siwbw1
	veth_down cmveth0 cmveth1
else
	echo "  no siw: $(cat /tmp/siw.modprobe)"
fi
echo "-- 22-rdma_bw-cm.sh took $(($(date +%s) - bwcm_t0)) s"
