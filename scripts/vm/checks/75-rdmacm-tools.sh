# rdmacm-utils' programs beyond rping (sourced by guest-test.sh after
# 70-rdmacm.sh, whose helpers it uses: cm_pair, wait_cm_listen,
# no_cm_ids, and its rdmacm-utils-against-itself outputs in /tmp as the
# reference): ibtool's ucmatose against rdmacm-utils' ucmatose both ways
# on Soft-RoCE (rxe) and Soft-iWARP (siw), each end with its own device
# on one end of a veth pair, its stdout byte for byte that of
# rdmacm-utils' in the same role; then its options (-m, -t, -a, -S, -c,
# -P ib) across the two, and the faults: an address nobody has, a port
# nobody listens on, and a server killed mid-transfer end ibtool's
# client with one clear line and a non-zero exit. No CM ID is left after
# any step.
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

# ucmatose_faults DEV REJECTED: the client's faults, each one line on
# stderr and the exit cmatose gives: 255 for a failed call, the event's
# status for an error event (REJECTED: the IB CM's reason 8 on rxe, the
# kernel's -ECONNREFUSED, 145 as an exit status, on siw).
ucmatose_faults() {
	dev=$1
	fails_cleanly "ucmatose $dev: unreachable address" 255 ucmatose -s 198.51.100.99 -C 1
	fails_cleanly "ucmatose $dev: port nobody listens on" "$2" ucmatose -s $CM_B -p 7999 -C 1
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
ucmatose_faults rxe 8
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
	ucmatose_faults siw 145
	tools_lap
	rdma link delete siwcm0
	rdma link delete siwcm1
	veth_down cmveth0 cmveth1
else
	fail "rdmacm tools: modprobe siw on $(uname -r): $(cat /tmp/siw.modprobe)"
fi
echo "  75-rdmacm-tools.sh: guest time $(($(date +%s) - tools_t0)) s"
