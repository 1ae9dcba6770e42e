# rdma_cm faults beyond rping's (sourced by guest-test.sh; veth_up,
# veth_down, wait_cm_listen, wait_for_line and no_cm_ids are its), on
# Soft-RoCE (rxe), each case on a veth pair and devices of its own (a
# link brought back up left the next CM REQ unanswered in 70-rdmacm.sh):
# the link goes down while ibtool's tool waits for its peer, under
# ucmatose's client and server, udaddy's client and server (each with
# rdmacm-utils' program of the name as its peer, which waits for a
# second connection), mckey's receiver, rdma_client and cmtime's client
# waiting for the reply to their connect (rdmacm-utils' server stopped
# with SIGSTOP after it listens), rdma_bw -R's client writing to
# perftest's ib_write_bw -R; and a server killed (SIGKILL) while
# ibtool's rping and ucmatose clients wait for that reply. Each time
# ibtool's tool must end within 30 s, non-zero (3 when the port went
# down), with one line on stderr naming the cause, and no CM ID is left;
# what rdmacm-utils' program in the case did (its peer, or its own
# client beside ibtool's; perftest's for rdma_bw) is shown beside it,
# killed when it still waits 2 s after ibtool's ended. It prints its
# guest time at the end.
mkdir -p "$H/out"
modprobe rdma_ucm
CF_A=198.51.100.1
CF_B=198.51.100.2
cf_t0=$(date +%s)

# cf_up: a fresh veth pair, rxecf0 on its first end (CF_A), rxecf1 on
# its second (CF_B). cf_down: both gone.
cf_up() {
	veth_up cfveth0 cfveth1 $CF_A $CF_B
	rdma link add rxecf0 type rxe netdev cfveth0
	rdma link add rxecf1 type rxe netdev cfveth1
	sleep 1
}
cf_down() {
	rdma link delete rxecf0
	rdma link delete rxecf1
	veth_down cfveth0 cfveth1
}

# cf_connecting PORT N: wait (up to 20 s) until N client IDs toward
# CF_B:PORT are in state CONNECT (their REQ out, no reply yet).
cf_connecting() {
	i=0
	while [ $i -lt 200 ]; do
		[ "$(rdma resource show cm_id 2>/dev/null | grep -c "state CONNECT .*dst-addr $CF_B:$1 ")" -ge "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "  (fewer than $2 IDs connecting to $CF_B:$1)"
	rdma resource show cm_id | sed 's/^/    /'
	return 1
}

# cf_ref_end PID: how rdmacm-utils' program of the case ended, in
# cf_ref: its exit status and when, or that it still waited 2 s after
# ibtool's had ended (it is killed then).
cf_ref_end() {
	i=0
	while [ $i -lt 20 ] && kill -0 "$1" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		wait "$1" 2>/dev/null
		cf_ref="still waiting 2 s later (killed)"
	else
		wait "$1"
		cf_ref="exit $? $((i / 10)).$((i % 10)) s after ibtool's"
	fi
}

# cf_judge NAME TOOL RC TOOK WANT PATTERN WHAT: ibtool's TOOL of case
# NAME (its outputs /tmp/cf-NAME.out and .err) ended with RC after TOOK
# s: pass when RC is WANT (nz: any but 0 and 124) within 30 s with one
# line on stderr, "TOOL: ..." matching PATTERN. WHAT says what the
# other program of the case was, cf_ref how it ended.
cf_judge() {
	name=$1 tool=$2 rc=$3 took=$4 want=$5 pat=$6 what=$7
	err=/tmp/cf-$name.err
	cp /tmp/cf-$name.out /tmp/cf-$name.err "$H/out/" 2>/dev/null
	cp /tmp/cf-$name.ref "$H/out/cf-$name.ref" 2>/dev/null
	if { [ "$want" = nz ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || [ "$rc" = "$want" ]; } && [ "$took" -le 30 ] &&
		[ "$(wc -l <$err)" -eq 1 ] && grep -q "^$tool: .*$pat" $err; then
		pass "$name: ibtool's $tool exit $rc in $took s: $(cat $err) ($what: $cf_ref)"
	else
		fail "$name: ibtool's $tool exit $rc (124: still running at 60 s) in $took s ($what: $cf_ref)"
		head -5 $err | sed 's/^/    /'
		tail -3 /tmp/cf-$name.out | sed 's/^/    /'
	fi
}

# cf_link_down NAME TOOL OURS WHAT REF [STOPPED]: the link goes down
# (cfveth1, which takes cfveth0's carrier with it) while ibtool's TOOL
# (pid OURS) waits; it must end with exit 3 naming the port. REF:
# rdmacm-utils' program of the case (WHAT); STOPPED: the stopped server,
# killed once the clients are done.
cf_link_down() {
	name=$1 tool=$2 ours=$3 what=$4 ref=$5 stopped=${6:-}
	t=$(date +%s)
	ip link set cfveth1 down
	wait "$ours"
	rc=$?
	took=$(($(date +%s) - t))
	cf_ref_end "$ref"
	if [ -n "$stopped" ]; then
		kill -9 "$stopped"
		wait "$stopped" 2>/dev/null
	fi
	cf_judge "$name" "$tool" $rc $took 3 "port 1 of rxecf[01] went down (IBV_EVENT_PORT_ERR)" "$what"
	no_cm_ids "$name"
	echo "  ($(($(date +%s) - cf_t0)) s)"
}

# ibtool's ucmatose client, connected to rdmacm-utils' server, which
# waits for a second connection before the messages: the client waits
# for the first message.
cf_up
stdbuf -oL ucmatose -b $CF_B -p 7301 -c 2 -C 10 >/tmp/cf-ucmatose-client.ref 2>&1 &
ref=$!
wait_cm_listen 7301
timeout 60 "$IBTOOL" ucmatose -s $CF_B -p 7301 -c 1 -C 10 >/tmp/cf-ucmatose-client.out 2>/tmp/cf-ucmatose-client.err &
ours=$!
wait_for_line /tmp/cf-ucmatose-client.out "receiving data transfers" 20
cf_link_down ucmatose-client ucmatose $ours "rdmacm-utils' server (waiting for its second connection)" $ref
cf_down

# ibtool's ucmatose server waits for its second connection; rdmacm-utils'
# client, connected, for the first message.
cf_up
timeout 60 "$IBTOOL" ucmatose -b $CF_B -p 7302 -c 2 -C 10 >/tmp/cf-ucmatose-server.out 2>/tmp/cf-ucmatose-server.err &
ours=$!
wait_cm_listen 7302
stdbuf -oL ucmatose -s $CF_B -p 7302 -c 1 -C 10 >/tmp/cf-ucmatose-server.ref 2>&1 &
ref=$!
wait_for_line /tmp/cf-ucmatose-server.ref "receiving data transfers" 20
cf_link_down ucmatose-server ucmatose $ours "rdmacm-utils' client (waiting for the first message)" $ref
cf_down

# udaddy, the same two ways (its port is 7174 whatever; each case has
# its own devices).
cf_up
stdbuf -oL udaddy -b $CF_B -c 2 -C 10 >/tmp/cf-udaddy-client.ref 2>&1 &
ref=$!
wait_cm_listen 7174
timeout 60 "$IBTOOL" udaddy -s $CF_B -c 1 -C 10 >/tmp/cf-udaddy-client.out 2>/tmp/cf-udaddy-client.err &
ours=$!
wait_for_line /tmp/cf-udaddy-client.out "receiving data transfers" 20
cf_link_down udaddy-client udaddy $ours "rdmacm-utils' server (waiting for its second connection)" $ref
cf_down

cf_up
timeout 60 "$IBTOOL" udaddy -b $CF_B -c 2 -C 10 >/tmp/cf-udaddy-server.out 2>/tmp/cf-udaddy-server.err &
ours=$!
wait_cm_listen 7174
stdbuf -oL udaddy -s $CF_B -c 1 -C 10 >/tmp/cf-udaddy-server.ref 2>&1 &
ref=$!
wait_for_line /tmp/cf-udaddy-server.ref "receiving data transfers" 20
cf_link_down udaddy-server udaddy $ours "rdmacm-utils' client (waiting for the replies)" $ref
cf_down

# mckey's receivers, ibtool's on one end and rdmacm-utils' on the other,
# joined, waiting for datagrams nobody sends.
cf_up
timeout 60 "$IBTOOL" mckey -m 239.1.2.4 -b $CF_B -C 3 >/tmp/cf-mckey-receiver.out 2>/tmp/cf-mckey-receiver.err &
ours=$!
stdbuf -oL mckey -m 239.1.2.4 -b $CF_A -C 3 >/tmp/cf-mckey-receiver.ref 2>&1 &
ref=$!
wait_for_line /tmp/cf-mckey-receiver.out "receiving data transfers" 20
wait_for_line /tmp/cf-mckey-receiver.ref "receiving data transfers" 20
cf_link_down mckey-receiver mckey $ours "rdmacm-utils' receiver (the same wait)" $ref
cf_down

# rdma_client and cmtime's client wait for the reply to their connect:
# rdmacm-utils' server is stopped (SIGSTOP) once it listens. Each has
# rdmacm-utils' client of the name beside it.
# cf_stopped_server TOOL PORT CONNECTING SERVER_CMD -- CLIENT_ARGS: the
# server stopped once it listens on PORT, ibtool's TOOL and rdmacm-utils'
# with CLIENT_ARGS connecting to it (CONNECTING CM IDs between them),
# then the link down under them.
cf_stopped_server() {
	tool=$1
	port=$2
	connecting=$3
	shift 3
	srvcmd=""
	while [ "$1" != "--" ]; do
		srvcmd="$srvcmd $1"
		shift
	done
	shift
	cf_up
	# shellcheck disable=SC2086
	$srvcmd >/dev/null 2>&1 &
	srv=$!
	wait_cm_listen "$port"
	kill -STOP $srv
	timeout 60 "$IBTOOL" "$tool" "$@" >"/tmp/cf-$tool.out" 2>"/tmp/cf-$tool.err" &
	ours=$!
	"$tool" "$@" >"/tmp/cf-$tool.ref" 2>&1 &
	ref=$!
	cf_connecting "$port" "$connecting"
	cf_link_down "$tool" "$tool" $ours "rdmacm-utils' client (the same wait)" $ref $srv
	cf_down
}
cf_stopped_server rdma_client 7303 2 rdma_server -s $CF_B -p 7303 -- -s $CF_B -p 7303
cf_stopped_server cmtime 7304 4 cmtime -b $CF_B -p 7304 -- -s $CF_B -p 7304 -c 2

# rdma_bw -R: ibtool's client writing to perftest's ib_write_bw -R
# server (-D 20) when the link goes down; its exchange and data
# connections both up.
cf_up
ib_write_bw -R -d rxecf1 -D 20 -p 7307 >/tmp/cf-rdma_bw.ref 2>&1 &
ref=$!
wait_cm_listen 7307
timeout 60 "$IBTOOL" rdma_bw -R -d rxecf0 -D 20 -p 7307 $CF_B >/tmp/cf-rdma_bw.out 2>/tmp/cf-rdma_bw.err &
ours=$!
cf_connecting 7307 2
sleep 1
cf_link_down rdma_bw rdma_bw $ours "perftest's ib_write_bw -R server (the peer)" $ref
cf_down

# cf_killed_server NAME TOOL PORT SERVER_CMD -- CLIENT_ARGS: rdmacm-utils'
# SERVER_CMD listens on PORT and is stopped; ibtool's TOOL and
# rdmacm-utils' client of the name (CLIENT_ARGS both) send their
# connect; the server is killed (SIGKILL) while they wait for the reply.
# ibtool's must end non-zero with one line naming the rejection.
cf_killed_server() {
	name=$1 tool=$2 port=$3
	shift 3
	srvcmd=""
	while [ "$1" != "--" ]; do
		srvcmd="$srvcmd $1"
		shift
	done
	shift
	cf_up
	# shellcheck disable=SC2086
	$srvcmd >/dev/null 2>&1 &
	srv=$!
	wait_cm_listen "$port"
	kill -STOP $srv
	timeout 60 "$IBTOOL" "$tool" "$@" >/tmp/cf-$name.out 2>/tmp/cf-$name.err &
	ours=$!
	"$tool" "$@" >/tmp/cf-$name.ref 2>&1 &
	ref=$!
	cf_connecting "$port" 2
	t=$(date +%s)
	kill -9 $srv
	wait $srv 2>/dev/null
	wait $ours
	rc=$?
	took=$(($(date +%s) - t))
	cf_ref_end $ref
	cf_judge "$name" "$tool" $rc $took nz "REJECTED" "rdmacm-utils' client (the same wait)"
	no_cm_ids "$name"
	echo "  ($(($(date +%s) - cf_t0)) s)"
	cf_down
}

cf_killed_server rping-killed-server rping 7305 rping -s -a $CF_B -p 7305 -- -c -a $CF_B -p 7305 -C 1
cf_killed_server ucmatose-killed-server ucmatose 7306 ucmatose -b $CF_B -p 7306 -c 1 -C 1 -- -s $CF_B -p 7306 -c 1 -C 1
echo "  77-rdmacm-faults.sh: guest time $(($(date +%s) - cf_t0)) s"
