# examples/rdmawrite on rxe0 (sourced by guest-test.sh): a user's program
# built from the examples module against pkg/verbs. The client writes its
# message into the server's memory with RDMA WRITE and reads the server's
# message back with RDMA READ; both processes use the same device, GID
# index 0 (rxe has no LIDs, so the peers route by GRH), and exchange their
# addresses over TCP.
RW_ADDR=192.0.2.1
mkdir -p "$H/out"
ip link set lo up
if [ ! -x "$H/rdmawrite" ]; then
	fail "examples/rdmawrite: not shared with the guest (make test-vm builds bin/rdmawrite)"
else
	timeout 60 "$H/rdmawrite" -d rxe0 -g 0 -s -p 18700 >/tmp/rw.srv 2>&1 &
	rw_srv=$!
	wait_listen 18700 || echo "(the server did not listen on 18700)" >>/tmp/rw.srv
	timeout 60 "$H/rdmawrite" -d rxe0 -g 0 -p 18700 "$RW_ADDR" >/tmp/rw.cli 2>&1
	rw_cli_rc=$?
	wait $rw_srv
	rw_srv_rc=$?
	cp /tmp/rw.srv /tmp/rw.cli "$H/out/" 2>/dev/null
	if [ $rw_cli_rc -eq 0 ] && [ $rw_srv_rc -eq 0 ] &&
		grep -Eq '^wrote "hello from the client, pid [0-9]+", read "hello from the other side, pid [0-9]+"$' /tmp/rw.cli &&
		grep -Eq '^the client wrote: "hello from the client, pid [0-9]+"$' /tmp/rw.srv; then
		pass "examples/rdmawrite: RDMA WRITE and READ between two processes on rxe0"
	else
		fail "examples/rdmawrite (exit $rw_cli_rc client, $rw_srv_rc server)"
		cat /tmp/rw.srv /tmp/rw.cli | head -10
	fi
fi
