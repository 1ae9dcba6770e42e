# The ibverbs-utils pingpongs on rxe0 (sourced by guest-test.sh): each of
# ibtool's runs against rdma-core's own program, ibtool as the server
# with rdma-core's client and the reverse, over the same device, with a
# GID index (-g 0: rxe has no LIDs, so the peers route by GRH). Both
# sides must finish, and every line ibtool prints must have the shape of
# the line rdma-core prints in the same role (numbers, hex and GIDs made
# placeholders; the values differ from run to run).
PP_ADDR=192.0.2.1
mkdir -p "$H/out"
ip link set lo up

# pp_shape FILE: the file's lines with the values made placeholders.
pp_shape() {
	sed -E 's/GID [0-9a-fA-F:.]+/GID G/g; s/(LID|RECV|SEND|PSN|SRQN) [0-9a-f]+([,: ])/\1 H\2/g; s/0x[0-9a-f]+/0xH/g; s/[0-9]+(\.[0-9]+)?/N/g' "$1"
}

# pp_run NAME PORT SERVER_CMD -- CLIENT_CMD: the server in the background,
# then the client to $PP_ADDR; outputs in /tmp/NAME.srv and .cli, each
# side's exit status in pp_srv_rc and pp_cli_rc.
pp_run() {
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
	timeout 60 $srv -p "$port" >"/tmp/$name.srv" 2>&1 &
	pp_srv=$!
	wait_listen "$port" || echo "(the server did not listen on $port)" >>"/tmp/$name.srv"
	timeout 60 "$@" -p "$port" "$PP_ADDR" >"/tmp/$name.cli" 2>&1
	pp_cli_rc=$?
	wait $pp_srv
	pp_srv_rc=$?
	cp "/tmp/$name.srv" "/tmp/$name.cli" "$H/out/" 2>/dev/null
}

# pp_interop TOOL PORT ARGS...: ibtool's TOOL against rdma-core's, both
# ways, and the shapes of ibtool's output against rdma-core's in the same
# role (the reference pair: rdma-core on both sides).
pp_interop() {
	tool=$1
	port=$2
	shift 2
	pp_run "$tool-ref" "$port" "$tool" "$@" -- "$tool" "$@"
	ref_rc="$pp_srv_rc/$pp_cli_rc"
	pp_shape "/tmp/$tool-ref.srv" >"/tmp/$tool-ref.srv.shape"
	pp_shape "/tmp/$tool-ref.cli" >"/tmp/$tool-ref.cli.shape"
	for way in srv cli; do
		if [ $way = srv ]; then
			pp_run "$tool-$way" $((port + 1)) "$IBTOOL" "$tool" "$@" -- "$tool" "$@"
			mine=/tmp/$tool-$way.srv
			ref=/tmp/$tool-ref.srv.shape
			what="ibtool's server with rdma-core's client"
		else
			pp_run "$tool-$way" $((port + 2)) "$tool" "$@" -- "$IBTOOL" "$tool" "$@"
			mine=/tmp/$tool-$way.cli
			ref=/tmp/$tool-ref.cli.shape
			what="rdma-core's server with ibtool's client"
		fi
		pp_shape "$mine" >"$mine.shape"
		if [ "$pp_srv_rc" -eq 0 ] && [ "$pp_cli_rc" -eq 0 ] && [ "$ref_rc" = 0/0 ] && cmp -s "$ref" "$mine.shape"; then
			pass "$tool $*: $what, same lines as rdma-core's: $(tail -1 "$mine")"
		else
			fail "$tool $*: $what (exit $pp_srv_rc server, $pp_cli_rc client; rdma-core alone $ref_rc)"
			diff -u "$ref" "$mine.shape" | head -20
			head -20 "/tmp/$tool-$way.srv" "/tmp/$tool-$way.cli"
		fi
	done
}

pp_interop ibv_rc_pingpong 18700 -d rxe0 -g 0 -n 200
pp_interop ibv_rc_pingpong 18710 -d rxe0 -g 0 -n 100 -e -s 65536 -m 1024
pp_interop ibv_rc_pingpong 18720 -d rxe0 -g 1 -n 50 -s 9000 -c
pp_interop ibv_uc_pingpong 18730 -d rxe0 -g 0 -n 200
pp_interop ibv_uc_pingpong 18740 -d rxe0 -g 0 -n 100 -e -c

fails_cleanly "ibv_rc_pingpong unknown device" 2 ibv_rc_pingpong -d nosuch "$PP_ADDR"
fails_cleanly "ibv_rc_pingpong unreachable server" 3 ibv_rc_pingpong -d rxe0 -g 0 -p 18799 127.0.0.1
fails_cleanly "ibv_rc_pingpong GID index over 255" 2 ibv_rc_pingpong -d rxe0 -g 300 "$PP_ADDR"

# UD: a message must fit in the port's active MTU (1024 on dummy0's 1500).
pp_interop ibv_ud_pingpong 18750 -d rxe0 -g 0 -s 1024 -n 200
pp_interop ibv_ud_pingpong 18760 -d rxe0 -g 1 -s 512 -n 100 -e -c
fails_cleanly "ibv_ud_pingpong size over the MTU" 3 ibv_ud_pingpong -d rxe0 -g 0 -s 2048 "$PP_ADDR"

# SRQ: 16 QPs (rdma-core's default) and 4 with events, 256 addresses each
# way in the exchange.
pp_interop ibv_srq_pingpong 18770 -d rxe0 -g 0 -n 200
pp_interop ibv_srq_pingpong 18780 -d rxe0 -g 0 -q 4 -r 50 -n 100 -e -c

# XRC: Soft-RoCE has none (no XRC in ibv_devinfo -v's capabilities): then
# both programs must fail to open the XRC domain, ibtool's with one line
# and exit 3; on a device with XRC, the same interop as above.
if ibv_devinfo -v -d rxe0 | grep -qw XRC; then
	pp_interop ibv_xsrq_pingpong 18790 -d rxe0 -g 0 -n 20
else
	timeout 20 ibv_xsrq_pingpong -d rxe0 -g 0 -p 18798 >/tmp/xsrq-ref.out 2>&1
	ref=$?
	if [ $ref -ne 0 ] && grep -q "XRC Domain" /tmp/xsrq-ref.out; then
		pass "ibv_xsrq_pingpong (rdma-core's) on rxe0, which has no XRC: exit $ref, $(grep 'XRC Domain' /tmp/xsrq-ref.out)"
	else
		fail "ibv_xsrq_pingpong (rdma-core's) on rxe0: exit $ref"
		cat /tmp/xsrq-ref.out
	fi
	fails_cleanly "ibv_xsrq_pingpong on rxe0, which has no XRC" 3 ibv_xsrq_pingpong -d rxe0 -g 0 -p 18799
fi

# A peer that stops answering leaves a pingpong waiting for a message
# that never comes (rdma-core's too); ibtool's must still end at SIGINT,
# polling and sleeping on CQ events (-e), and die of it (status 130). The server is
# stopped (SIGSTOP), not killed: over Soft-RoCE a killed peer's QP is
# gone and the client's next send fails after its retries (transport
# retry counter exceeded, exit 3), which is an answer, not a hang.
pp_port=18794
for ev in "" "-e"; do
	pp_port=$((pp_port + 1))
	ibv_rc_pingpong -d rxe0 -g 0 -n 1000000 -p $pp_port >/tmp/pp-stop.srv 2>&1 &
	pp_srv=$!
	wait_listen $pp_port || echo "(the server did not listen on $pp_port)" >>/tmp/pp-stop.srv
	# A command this script runs with & starts with SIGINT ignored (sh
	# without job control), which ibtool keeps, as a C tool does: env
	# gives it SIGINT's default, as a terminal's foreground job has it.
	env --default-signal=INT "$IBTOOL" ibv_rc_pingpong -d rxe0 -g 0 -n 1000000 $ev -p $pp_port "$PP_ADDR" >/tmp/pp-stop.cli 2>&1 &
	pp_cli=$!
	wait_for_line /tmp/pp-stop.cli 'remote address' || echo "(the client had no remote address after 30 s)" >>/tmp/pp-stop.cli
	sleep 1
	kill -STOP $pp_srv
	sleep 2
	kill -INT $pp_cli 2>/dev/null
	t0=$(cut -d' ' -f1 /proc/uptime)
	( sleep 10; kill -9 $pp_cli 2>/dev/null ) &
	pp_guard=$!
	wait $pp_cli
	pp_cli_rc=$?
	kill $pp_guard 2>/dev/null
	took=$(awk -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }')
	kill -9 $pp_srv 2>/dev/null
	kill -CONT $pp_srv 2>/dev/null
	wait $pp_srv 2>/dev/null
	cp /tmp/pp-stop.srv "$H/out/pp-stop$ev.srv"
	cp /tmp/pp-stop.cli "$H/out/pp-stop$ev.cli"
	if [ $pp_cli_rc -eq 130 ] && grep -q 'remote address' /tmp/pp-stop.cli; then
		pass "ibv_rc_pingpong ${ev:+$ev }client whose server stopped answering: SIGINT ended it in ${took}s, exit 130"
	else
		fail "ibv_rc_pingpong ${ev:+$ev }client whose server stopped answering: exit $pp_cli_rc ${took}s after SIGINT (want 130)"
		tail -n 5 /tmp/pp-stop.cli /tmp/pp-stop.srv
	fi
done
