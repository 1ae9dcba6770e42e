# ibv_asyncwatch on rxe0 (sourced by guest-test.sh): rdma-core's and
# ibtool's watch the device at the same time while its netdev goes down
# and up; both must print the same events in the same order (the FD
# number aside), among them the port's IBV_EVENT_PORT_ERR and
# IBV_EVENT_PORT_ACTIVE.
ibv_asyncwatch -d rxe0 >/tmp/aw-ref.out 2>/tmp/aw-ref.err &
aw_ref=$!
"$IBTOOL" ibv_asyncwatch -d rxe0 >/tmp/aw-got.out 2>/tmp/aw-got.err &
aw_got=$!
# Both must be watching before the link moves: under software emulation
# a program takes seconds to start (a first run with a fixed 2 s wait saw
# ibtool's first line only after the port went down).
i=0
while [ $i -lt 100 ] && ! { grep -q 'async event FD' /tmp/aw-ref.out && grep -q 'async event FD' /tmp/aw-got.out; }; do
	sleep 0.2
	i=$((i + 1))
done
sleep 1
ip link set dummy0 down
sleep 2
ip link set dummy0 up
sleep 3
kill $aw_ref $aw_got
wait $aw_got
aw_rc=$?
wait $aw_ref 2>/dev/null
mkdir -p "$H/out"
cp /tmp/aw-ref.out /tmp/aw-got.out "$H/out/"
sed -E 's/FD [0-9]+/FD N/' /tmp/aw-ref.out >/tmp/aw-ref.shape
sed -E 's/FD [0-9]+/FD N/' /tmp/aw-got.out >/tmp/aw-got.shape
if cmp -s /tmp/aw-ref.shape /tmp/aw-got.shape && grep -q 'IBV_EVENT_PORT_ERR (10), port 1' /tmp/aw-got.out &&
	grep -q 'IBV_EVENT_PORT_ACTIVE (9), port 1' /tmp/aw-got.out; then
	pass "ibv_asyncwatch -d rxe0, dummy0 down and up (ibtool's exit $aw_rc at SIGTERM): the same $(($(wc -l </tmp/aw-got.out) - 1)) events as rdma-core's: $(tail -n +2 /tmp/aw-got.out | sed 's/^ *event_type //' | tr '\n' ';')"
else
	fail "ibv_asyncwatch -d rxe0, dummy0 down and up"
	diff -u /tmp/aw-ref.shape /tmp/aw-got.shape | head -20
	cat /tmp/aw-ref.err /tmp/aw-got.err
fi
fails_cleanly "ibv_asyncwatch unknown device" 2 ibv_asyncwatch -d nosuch
