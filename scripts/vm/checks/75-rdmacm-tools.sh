# rdmacm-utils' programs beyond rping (sourced by guest-test.sh after
# 70-rdmacm.sh, whose cm_pair it uses, and its rdmacm-utils-against-itself
# outputs in /tmp as the references; wait_cm_listen and no_cm_ids are
# guest-test.sh's): ibtool's ucmatose, udaddy, mckey, cmtime and
# rdma_server/rdma_client against rdmacm-utils' programs of the same
# names both ways, each end with its own device on one end of a veth
# pair, on Soft-RoCE (rxe) for all and on Soft-iWARP (siw) for the RC
# ones (udaddy and mckey need UD QPs, which iWARP has not: there ibtool's
# udaddy fails as rdmacm-utils' does). Each side's stdout is that of
# rdmacm-utils' program in the same role (cmtime's numbers aside); the
# options are run across the two; the faults (an address nobody has, a
# port nobody listens on, a server killed mid-transfer, a message larger
# than the MTU) end ibtool's tool with one line on stderr and the exit
# status rdmacm-utils' gives. No CM ID is left after any step. It prints
# its guest time at the end.
tools_t0=$(date +%s)
CM_A=198.51.100.1
CM_B=198.51.100.2

# tools_lap: the guest seconds since this check began.
tools_lap() { echo "  ($(($(date +%s) - tools_t0)) s)"; }

# same_pair WHAT NAME REF: pass when the pair NAME (cm_pair's) ended
# with exit 0 on both sides and each side's stdout is that of the
# reference pair REF (/tmp/REF.srv and .cli).
same_pair() {
	if [ "$cm_srv_rc" -eq 0 ] && [ "$cm_cli_rc" -eq 0 ] && [ -s "/tmp/$3.srv" ] &&
		cmp -s "/tmp/$3.srv" "/tmp/$2.srv" && cmp -s "/tmp/$3.cli" "/tmp/$2.cli"; then
		pass "$1: both exit 0, both sides' output as rdmacm-utils'"
	else
		fail "$1: server exit $cm_srv_rc, client exit $cm_cli_rc (124: timed out)"
		diff "/tmp/$3.srv" "/tmp/$2.srv" | head -5
		diff "/tmp/$3.cli" "/tmp/$2.cli" | head -5
		tail -n 3 "/tmp/$2.srv.err" "/tmp/$2.cli.err" | sed 's/^/    /'
	fi
}

# both_ok WHAT NAME [SERVER_LINE]: pass when the pair NAME ended with
# exit 0 on both sides (and the server printed SERVER_LINE).
both_ok() {
	if [ "$cm_srv_rc" -eq 0 ] && [ "$cm_cli_rc" -eq 0 ] && { [ -z "$3" ] || grep -qx "$3" "/tmp/$2.srv"; }; then
		pass "$1: both exit 0"
	else
		fail "$1: server exit $cm_srv_rc, client exit $cm_cli_rc (124: timed out)"
		tail -n 4 "/tmp/$2.srv" "/tmp/$2.srv.err" "/tmp/$2.cli" "/tmp/$2.cli.err" | sed 's/^/    /'
	fi
}

# ucmatose_interop DEV: ibtool's ucmatose against rdmacm-utils' both
# ways, -c 2 -C 3 as 70-rdmacm.sh ran rdmacm-utils' against itself (the
# reference), then with the options.
ucmatose_interop() {
	dev=$1
	ref=ucmatose-self-$dev
	cm_pair "ucmatose-$dev-srv" 7191 "$IBTOOL" ucmatose -b $CM_B -p 7191 -c 2 -C 3 -- ucmatose -s $CM_B -p 7191 -c 2 -C 3
	same_pair "ucmatose $dev: ibtool's server with rdmacm-utils' client, 2 connections, 3 messages each way" "ucmatose-$dev-srv" "$ref"
	no_cm_ids "ibtool's ucmatose server"
	cm_pair "ucmatose-$dev-cli" 7192 stdbuf -oL ucmatose -b $CM_B -p 7192 -c 2 -C 3 -- "$IBTOOL" ucmatose -s $CM_B -p 7192 -c 2 -C 3
	if [ "$cm_cli_rc" -ne 0 ] && grep -q 'connection refused' "/tmp/ucmatose-$dev-cli.cli.err"; then
		# Seen once on siw (1 run in 5): the connect refused though the
		# server's CM ID already listened (wait_cm_listen). Once more,
		# the first try's end in the log.
		echo "  ucmatose $dev: ibtool's client refused on the first try: $(tail -1 "/tmp/ucmatose-$dev-cli.cli.err"); once more"
		no_cm_ids "the refused ucmatose pair"
		cm_pair "ucmatose-$dev-cli" 7192 stdbuf -oL ucmatose -b $CM_B -p 7192 -c 2 -C 3 -- "$IBTOOL" ucmatose -s $CM_B -p 7192 -c 2 -C 3
	fi
	same_pair "ucmatose $dev: ibtool's client with rdmacm-utils' server, 2 connections, 3 messages each way" "ucmatose-$dev-cli" "$ref"
	no_cm_ids "ibtool's ucmatose client"
	# Event channel migration, type of service, ACK timeout, bigger
	# messages, more connections; each side ibtool once.
	cm_pair "ucmatose-$dev-opt1" 7193 "$IBTOOL" ucmatose -b $CM_B -p 7193 -c 3 -C 5 -S 1000 -m -a 14 -- \
		ucmatose -s $CM_B -p 7193 -c 3 -C 5 -S 1000 -m -t 0x48 -a 14
	both_ok "ucmatose $dev: ibtool's server -m -a 14 -c 3 -C 5 -S 1000 with rdmacm-utils' client -m -t 0x48 -a 14" "ucmatose-$dev-opt1" "migrating to new event channel"
	no_cm_ids "ibtool's ucmatose server -m"
	cm_pair "ucmatose-$dev-opt2" 7194 stdbuf -oL ucmatose -b $CM_B -p 7194 -c 3 -C 5 -S 1000 -m -a 14 -- \
		"$IBTOOL" ucmatose -s $CM_B -p 7194 -c 3 -C 5 -S 1000 -m -t 0x48 -a 14
	both_ok "ucmatose $dev: ibtool's client -m -t 0x48 -a 14 -c 3 -C 5 -S 1000 with rdmacm-utils' server -m -a 14" "ucmatose-$dev-opt2" "migrating to new event channel"
	no_cm_ids "ibtool's ucmatose client -m"
}

# fails_like WHAT TOOL ARGS...: rdmacm-utils' TOOL with ARGS fails; then
# ibtool's TOOL with them must fail with the same exit status (the
# program's return status) and one line on stderr.
fails_like() {
	what=$1
	shift
	timeout 30 "$@" >/tmp/ref.out 2>&1
	want=$?
	if [ $want -eq 0 ] || [ $want -eq 124 ]; then
		fail "$what: rdmacm-utils' $1 exit $want, not a failure to compare with"
		head -5 /tmp/ref.out
		return
	fi
	fails_cleanly "$what (rdmacm-utils' exit too)" $want "$@"
}

# exits_like WHAT TOOL ARGS...: rdmacm-utils' TOOL and ibtool's with
# ARGS end with the same exit status, ibtool's with at most one line on
# stderr (AF_IB addresses, which the kernel takes or refuses by device).
exits_like() {
	what=$1
	shift
	timeout 30 "$@" >/tmp/ref.out 2>&1
	want=$?
	timeout 30 "$IBTOOL" "$@" >/tmp/got.out 2>/tmp/got.err
	got=$?
	if [ $got -eq $want ] && [ $want -ne 124 ] && [ "$(wc -l </tmp/got.err)" -le 1 ]; then
		pass "$what: exit $got as rdmacm-utils' ($(tail -1 /tmp/ref.out)${want:+; ibtool: $(cat /tmp/got.err)})"
	else
		fail "$what: exit $got, rdmacm-utils' $want"
		cat /tmp/ref.out /tmp/got.out /tmp/got.err | head -12
	fi
}

# ucmatose_faults DEV: the client's faults, each the exit status
# rdmacm-utils' ucmatose gives and one line on stderr.
ucmatose_faults() {
	dev=$1
	fails_like "ucmatose $dev: unreachable address" ucmatose -s 198.51.100.99 -C 1
	fails_like "ucmatose $dev: port nobody listens on" ucmatose -s $CM_B -p 7999 -C 1
	no_cm_ids "the failed ucmatose connects"
	# A server killed mid-transfer: rdmacm-utils' server sends 5 messages
	# and waits for 5 replies; ibtool's client waits for 10 messages.
	ucmatose -b $CM_B -p 7195 -C 5 >/dev/null 2>&1 &
	srv=$!
	wait_cm_listen 7195
	timeout 30 "$IBTOOL" ucmatose -s $CM_B -p 7195 -C 10 >/tmp/ucmatose-kill.out 2>/tmp/ucmatose-kill.err &
	cli=$!
	wait_for_line /tmp/ucmatose-kill.out "receiving data transfers" 20
	sleep 1
	kill -9 $srv
	wait $cli
	rc=$?
	wait $srv 2>/dev/null
	cp /tmp/ucmatose-kill.out /tmp/ucmatose-kill.err "$H/out/"
	if [ $rc -eq 255 ] && [ "$(wc -l </tmp/ucmatose-kill.err)" -eq 1 ] &&
		grep -q "^ucmatose: .*RDMA_CM_EVENT_DISCONNECTED: the peer disconnected$" /tmp/ucmatose-kill.err; then
		pass "ucmatose $dev: server killed mid-transfer: exit 255: $(cat /tmp/ucmatose-kill.err)"
	else
		fail "ucmatose $dev: server killed mid-transfer: exit $rc"
		head -5 /tmp/ucmatose-kill.err /tmp/ucmatose-kill.out
	fi
	no_cm_ids "the killed ucmatose server"
}

# udaddy_interop: ibtool's udaddy against rdmacm-utils' both ways on
# rxe, -c 2 -C 3 as 70-rdmacm.sh ran rdmacm-utils' against itself (the
# reference; udaddy's port is always 7174), then -t and -S, and the
# faults.
udaddy_interop() {
	ref=udaddy-self-rxe
	cm_pair udaddy-rxe-srv 7174 "$IBTOOL" udaddy -b $CM_B -c 2 -C 3 -- udaddy -s $CM_B -c 2 -C 3
	same_pair "udaddy rxe: ibtool's server with rdmacm-utils' client, 2 endpoints, 3 datagrams each way" udaddy-rxe-srv "$ref"
	no_cm_ids "ibtool's udaddy server"
	cm_pair udaddy-rxe-cli 7174 stdbuf -oL udaddy -b $CM_B -c 2 -C 3 -- "$IBTOOL" udaddy -s $CM_B -c 2 -C 3
	same_pair "udaddy rxe: ibtool's client with rdmacm-utils' server, 2 endpoints, 3 datagrams each way" udaddy-rxe-cli "$ref"
	no_cm_ids "ibtool's udaddy client"
	cm_pair udaddy-rxe-opt 7174 stdbuf -oL udaddy -b $CM_B -c 3 -C 5 -S 1000 -- "$IBTOOL" udaddy -s $CM_B -c 3 -C 5 -S 1000 -t 0x48
	both_ok "udaddy rxe: ibtool's client -c 3 -C 5 -S 1000 -t 0x48 with rdmacm-utils' server" udaddy-rxe-opt
	no_cm_ids "ibtool's udaddy client -t"
	fails_like "udaddy rxe: unreachable address" udaddy -s 198.51.100.99 -C 1
	fails_like "udaddy rxe: nobody listens" udaddy -s $CM_B -C 1
	fails_like "udaddy rxe: -S larger than the path MTU" udaddy -s $CM_B -C 1 -S 5000
	no_cm_ids "the failed udaddy resolutions"
}

# mc_pair NAME RECEIVER_CMD -- SENDER_CMD: a receiver joined to the
# group first (up to 30 s for its join line), then a sender, each under
# a timeout; stdout in /tmp/NAME.recv and .send (stderr in .err), exit
# statuses in mc_recv_rc and mc_send_rc.
mc_pair() {
	name=$1
	shift
	recv=""
	while [ "$1" != "--" ]; do
		recv="$recv $1"
		shift
	done
	shift
	# shellcheck disable=SC2086
	timeout 60 $recv >"/tmp/$name.recv" 2>"/tmp/$name.recv.err" &
	mc_r=$!
	wait_for_line "/tmp/$name.recv" "joined dgid" 30
	timeout 30 "$@" >"/tmp/$name.send" 2>"/tmp/$name.send.err"
	mc_send_rc=$?
	wait $mc_r
	mc_recv_rc=$?
	for f in recv recv.err send send.err; do cp "/tmp/$name.$f" "$H/out/" 2>/dev/null; done
}

# mc_same WHAT NAME: pass when both ends of mc_pair NAME exited 0 and
# each one's stdout is rdmacm-utils' mckey's in the same role (the
# reference pair, mckey-ref).
mc_same() {
	if [ "$mc_recv_rc" -eq 0 ] && [ "$mc_send_rc" -eq 0 ] && cmp -s /tmp/mckey-ref.recv "/tmp/$2.recv" &&
		cmp -s /tmp/mckey-ref.send "/tmp/$2.send"; then
		pass "$1: both exit 0, both sides' output as rdmacm-utils' ($(grep -o 'joined dgid: .*' "/tmp/$2.recv"))"
	else
		fail "$1: receiver exit $mc_recv_rc, sender exit $mc_send_rc (124: timed out)"
		diff /tmp/mckey-ref.recv "/tmp/$2.recv" | head -5
		diff /tmp/mckey-ref.send "/tmp/$2.send" | head -5
		tail -n 3 "/tmp/$2.recv.err" "/tmp/$2.send.err" | sed 's/^/    /'
	fi
}

# mckey_interop: ibtool's mckey against rdmacm-utils' both ways on rxe,
# receiver and sender, 3 datagrams to 239.1.2.3; rdmacm-utils' against
# itself first (the reference); then -c 2 -S 500 -o and the faults.
mckey_interop() {
	mc_pair mckey-ref stdbuf -oL mckey -m 239.1.2.3 -b $CM_B -C 3 -- mckey -m 239.1.2.3 -b $CM_A -s -C 3
	if [ "$mc_recv_rc" -ne 0 ] || [ "$mc_send_rc" -ne 0 ]; then
		fail "mckey rxe: rdmacm-utils' mckey against itself: receiver exit $mc_recv_rc, sender exit $mc_send_rc"
		return
	fi
	pass "mckey rxe: rdmacm-utils' mckey against itself, 3 datagrams (the reference)"
	no_cm_ids "rdmacm-utils' mckey"
	mc_pair mckey-rxe-recv "$IBTOOL" mckey -m 239.1.2.3 -b $CM_B -C 3 -- mckey -m 239.1.2.3 -b $CM_A -s -C 3
	mc_same "mckey rxe: ibtool's receiver with rdmacm-utils' sender, 3 datagrams" mckey-rxe-recv
	no_cm_ids "ibtool's mckey receiver"
	mc_pair mckey-rxe-send stdbuf -oL mckey -m 239.1.2.3 -b $CM_B -C 3 -- "$IBTOOL" mckey -m 239.1.2.3 -b $CM_A -s -C 3
	mc_same "mckey rxe: ibtool's sender with rdmacm-utils' receiver, 3 datagrams" mckey-rxe-send
	no_cm_ids "ibtool's mckey sender"
	mc_pair mckey-rxe-opt stdbuf -oL mckey -m 239.1.2.5 -b $CM_B -c 2 -C 4 -S 500 -- "$IBTOOL" mckey -m 239.1.2.5 -b $CM_A -s -o -c 2 -C 4 -S 500
	if [ "$mc_recv_rc" -eq 0 ] && [ "$mc_send_rc" -eq 0 ] && [ "$(grep -c '^mckey: joined dgid: ::ffff:239.1.2.5 ' /tmp/mckey-rxe-opt.send)" -eq 2 ]; then
		pass "mckey rxe: ibtool's send-only sender -o -c 2 -C 4 -S 500 with rdmacm-utils' receiver: both exit 0"
	else
		fail "mckey rxe: ibtool's sender -o -c 2 -C 4 -S 500: receiver exit $mc_recv_rc, sender exit $mc_send_rc"
		tail -n 4 /tmp/mckey-rxe-opt.recv /tmp/mckey-rxe-opt.send /tmp/mckey-rxe-opt.send.err | sed 's/^/    /'
	fi
	no_cm_ids "ibtool's mckey -o"
	# -l (no multicast loopback): the QP creation flag, as the device
	# takes it or refuses it for rdmacm-utils' mckey.
	timeout 30 mckey -m 239.1.2.3 -b $CM_B -l -C 0 >/tmp/mckey-l.ref 2>&1
	want=$?
	timeout 30 "$IBTOOL" mckey -m 239.1.2.3 -b $CM_B -l -C 0 >/tmp/mckey-l.out 2>/tmp/mckey-l.err
	got=$?
	if [ $got -eq $want ] && [ "$(wc -l </tmp/mckey-l.err)" -le 1 ]; then
		pass "mckey rxe: -l: exit $got as rdmacm-utils' ($(grep -h 'unable to create QP' /tmp/mckey-l.ref | head -1))"
	else
		fail "mckey rxe: -l: exit $got, rdmacm-utils' $want"
		cat /tmp/mckey-l.ref /tmp/mckey-l.err | head -6
	fi
	exits_like "mckey rxe: -M ff0e::ffff:e901:203 (an unmapped group)" mckey -M ff0e::ffff:e901:203 -b $CM_B -C 0
	exits_like "mckey rxe: -M without -b" mckey -M ff0e::ffff:e901:203 -C 0
	fails_like "mckey rxe: unreachable bind address" mckey -m 239.1.2.3 -b 198.51.100.99 -C 1
	fails_like "mckey rxe: -S larger than the path MTU" mckey -m 239.1.2.3 -b $CM_B -C 1 -S 5000
	no_cm_ids "the failed mckey joins"
}

# cm_shape FILE: cmtime's output with its numbers as N: the lines and
# the table's layout, which two runs share.
cm_shape() { sed -E 's/ *[0-9]+\.[0-9]{2}/ N/g' "$1"; }

# cmtime_interop DEV: ibtool's cmtime against rdmacm-utils' both ways
# (-c 5), each client's output shaped as rdmacm-utils' client's against
# its own server in 70-rdmacm.sh; the client's options; the faults.
cmtime_interop() {
	dev=$1
	cm_shape /tmp/cmtime-self-$dev.cli >/tmp/cmtime-ref.shape
	cm_killsrv=1
	cm_pair "cmtime-$dev-srv" 7197 "$IBTOOL" cmtime -b $CM_B -p 7197 -- cmtime -s $CM_B -p 7197 -c 5
	cm_shape "/tmp/cmtime-$dev-srv.cli" >/tmp/cmtime-got.shape
	if [ "$cm_srv_rc" -eq 0 ] && [ "$cm_cli_rc" -eq 0 ] && cmp -s /tmp/cmtime-ref.shape /tmp/cmtime-got.shape; then
		pass "cmtime $dev: ibtool's server with rdmacm-utils' client, 5 connections: $(grep '^connect ' "/tmp/cmtime-$dev-srv.cli")"
	else
		fail "cmtime $dev: ibtool's server with rdmacm-utils' client: server exit $cm_srv_rc (0: still serving), client exit $cm_cli_rc"
		diff /tmp/cmtime-ref.shape /tmp/cmtime-got.shape | head -5
		tail -n 3 "/tmp/cmtime-$dev-srv.srv.err" "/tmp/cmtime-$dev-srv.cli" | sed 's/^/    /'
	fi
	no_cm_ids "ibtool's cmtime server"
	cm_pair "cmtime-$dev-cli" 7198 stdbuf -oL cmtime -b $CM_B -p 7198 -- "$IBTOOL" cmtime -s $CM_B -p 7198 -c 5
	cm_shape "/tmp/cmtime-$dev-cli.cli" >/tmp/cmtime-got.shape
	if [ "$cm_srv_rc" -eq 0 ] && [ "$cm_cli_rc" -eq 0 ] && cmp -s /tmp/cmtime-ref.shape /tmp/cmtime-got.shape; then
		pass "cmtime $dev: ibtool's client with rdmacm-utils' server, 5 connections, the table as rdmacm-utils': $(grep '^connect ' "/tmp/cmtime-$dev-cli.cli")"
	else
		fail "cmtime $dev: ibtool's client with rdmacm-utils' server: server exit $cm_srv_rc (0: still serving), client exit $cm_cli_rc"
		diff /tmp/cmtime-ref.shape /tmp/cmtime-got.shape | head -5
		tail -n 3 "/tmp/cmtime-$dev-cli.cli.err" | sed 's/^/    /'
	fi
	no_cm_ids "ibtool's cmtime client"
	cm_pair "cmtime-$dev-opt" 7199 "$IBTOOL" cmtime -b $CM_B -p 7199 -- "$IBTOOL" cmtime -s $CM_B -b $CM_A -p 7199 -c 20 -r 1 -t 1000
	if [ "$cm_srv_rc" -eq 0 ] && [ "$cm_cli_rc" -eq 0 ] && grep -q "^bind addr    : " "/tmp/cmtime-$dev-opt.cli"; then
		pass "cmtime $dev: ibtool on both sides, -c 20 -b -r 1 -t 1000: $(grep '^connect ' "/tmp/cmtime-$dev-opt.cli")"
	else
		fail "cmtime $dev: ibtool on both sides, -c 20 -b -r 1 -t 1000: server exit $cm_srv_rc, client exit $cm_cli_rc"
		tail -n 4 "/tmp/cmtime-$dev-opt.cli" "/tmp/cmtime-$dev-opt.cli.err" "/tmp/cmtime-$dev-opt.srv.err" | sed 's/^/    /'
	fi
	cm_killsrv=0
	no_cm_ids "ibtool's cmtime -c 20"
	fails_like "cmtime $dev: unreachable address" cmtime -s 198.51.100.99 -c 1
	# A port nobody listens on: rdmacm-utils' cmtime prints the event and
	# exits 0 when the request went out (rxe); ibtool's prints the same
	# line and fails.
	timeout 30 cmtime -s $CM_B -p 7999 -c 1 >/tmp/cmtime-rej.ref 2>&1
	want=$?
	timeout 30 "$IBTOOL" cmtime -s $CM_B -p 7999 -c 1 >/tmp/cmtime-rej.out 2>/tmp/cmtime-rej.err
	got=$?
	ev=$(grep -h '^event: ' /tmp/cmtime-rej.ref)
	if [ $got -ne 0 ] && [ "$(wc -l </tmp/cmtime-rej.err)" -eq 1 ] && { [ -z "$ev" ] || grep -qxF "$ev" /tmp/cmtime-rej.out; }; then
		pass "cmtime $dev: port nobody listens on: exit $got (rdmacm-utils' $want${ev:+, both: $ev}): $(cat /tmp/cmtime-rej.err)"
	else
		fail "cmtime $dev: port nobody listens on: exit $got (rdmacm-utils' $want)"
		cat /tmp/cmtime-rej.ref /tmp/cmtime-rej.out /tmp/cmtime-rej.err | head -12
	fi
	no_cm_ids "the failed cmtime connects"
}

# rdma_pair_interop DEV: ibtool's rdma_server and rdma_client against
# rdmacm-utils' both ways, each side's output as rdmacm-utils' against
# itself in 70-rdmacm.sh; the client's faults.
rdma_pair_interop() {
	dev=$1
	ref=rdma_server-self-$dev
	cm_pair "rdma_pair-$dev-srv" 7201 "$IBTOOL" rdma_server -s $CM_B -p 7201 -- rdma_client -s $CM_B -p 7201
	same_pair "rdma_server $dev: ibtool's rdma_server with rdmacm-utils' rdma_client, one message each way" "rdma_pair-$dev-srv" "$ref"
	no_cm_ids "ibtool's rdma_server"
	cm_pair "rdma_pair-$dev-cli" 7202 stdbuf -oL rdma_server -s $CM_B -p 7202 -- "$IBTOOL" rdma_client -s $CM_B -p 7202
	same_pair "rdma_client $dev: ibtool's rdma_client with rdmacm-utils' rdma_server, one message each way" "rdma_pair-$dev-cli" "$ref"
	no_cm_ids "ibtool's rdma_client"
	fails_like "rdma_client $dev: unreachable address" rdma_client -s 198.51.100.99
	fails_like "rdma_client $dev: port nobody listens on" rdma_client -s $CM_B -p 7999
	no_cm_ids "the failed rdma_client connects"
}

step "rdmacm tools: Soft-RoCE (rxe) on each end of a veth pair"
veth_up cmveth0 cmveth1 $CM_A $CM_B
rdma link add rxecm0 type rxe netdev cmveth0
rdma link add rxecm1 type rxe netdev cmveth1
sleep 1
ucmatose_interop rxe
# The IB port space (RDMA_PS_IB) over IPv4 addresses, ibtool's server.
cm_pair "ucmatose-rxe-ib" 7196 "$IBTOOL" ucmatose -P ib -b $CM_B -p 7196 -c 2 -C 3 -- ucmatose -P ib -s $CM_B -p 7196 -c 2 -C 3
both_ok "ucmatose rxe: -P ib, ibtool's server with rdmacm-utils' client" ucmatose-rxe-ib
no_cm_ids "ucmatose -P ib"
ucmatose_faults rxe
# AF_IB addresses (-f gid, mckey's -M) on RoCE: the GID of the server's
# device as the address; the kernel resolves AF_IB on InfiniBand only.
gid=$(cat /sys/class/infiniband/rxecm1/ports/1/gids/0)
exits_like "ucmatose rxe: -f gid $gid" ucmatose -f gid -s "$gid" -C 1
exits_like "udaddy rxe: -f gid $gid" udaddy -f gid -s "$gid" -C 1
no_cm_ids "the AF_IB resolutions"
tools_lap
udaddy_interop
tools_lap
mckey_interop
tools_lap
cmtime_interop rxe
rdma_pair_interop rxe
tools_lap
rdma link delete rxecm0
rdma link delete rxecm1
veth_down cmveth0 cmveth1

step "rdmacm tools: Soft-iWARP (siw) on each end of a veth pair"
if modprobe siw 2>/tmp/siw.modprobe; then
	veth_up cmveth0 cmveth1 $CM_A $CM_B
	rdma link add siwcm0 type siw netdev cmveth0
	rdma link add siwcm1 type siw netdev cmveth1
	sleep 1
	ucmatose_interop siw
	ucmatose_faults siw
	# iWARP has no datagram QPs: udaddy's QP creation fails as
	# rdmacm-utils' does.
	fails_like "udaddy siw: no UD QPs on iWARP" udaddy -s $CM_B -C 1
	no_cm_ids "udaddy on siw"
	tools_lap
	cmtime_interop siw
	rdma_pair_interop siw
	tools_lap
	rdma link delete siwcm0
	rdma link delete siwcm1
	veth_down cmveth0 cmveth1
else
	fail "rdmacm tools: modprobe siw on $(uname -r): $(cat /tmp/siw.modprobe)"
fi
echo "  75-rdmacm-tools.sh: guest time $(($(date +%s) - tools_t0)) s"
