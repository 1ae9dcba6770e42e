# ibsysstat's CPU list longer than one MAD over the kernel's RMPP: the
# server's agent registers with RMPP and the kernel segments its answer;
# the client's kernel reassembles it. 64 made-up processors are
# bind-mounted over /proc/cpuinfo for the server.
gid=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)
: >/tmp/cpuinfo64
i=0
while [ $i -lt 64 ]; do
	printf 'processor\t: %d\nmodel name\t: Fake CPU %d\ncpu MHz\t\t: %d.000\n\n' $i $((1000 + i)) $((2000 + i)) >>/tmp/cpuinfo64
	i=$((i + 1))
done
mount --bind /tmp/cpuinfo64 /proc/cpuinfo
"$IBTOOL" ibsysstat -S >/tmp/rmppsrv.out 2>&1 &
rmppsrv=$!
sysstat_ready "$gid"
"$IBTOOL" ibsysstat -t 2000 "$gid" cpu >/tmp/rmppcpu.out 2>&1
rc=$?
kill $rmppsrv 2>/dev/null
wait $rmppsrv 2>/dev/null
umount /proc/cpuinfo
n=$(grep -c '^cpu ' /tmp/rmppcpu.out)
if [ $rc -eq 0 ] && [ "$n" -eq 64 ] && grep -qx 'cpu 63: model  Fake CPU 1063 MHZ  2063.000' /tmp/rmppcpu.out; then
	pass "ibsysstat cpu over the kernel's RMPP to $gid: $n processors, $(wc -c </tmp/rmppcpu.out) bytes"
else
	fail "ibsysstat cpu over the kernel's RMPP to $gid (exit $rc, $n lines)"
	head -5 /tmp/rmppcpu.out
	tail -3 /tmp/rmppcpu.out
	cat /tmp/rmppsrv.out | head -10
fi
