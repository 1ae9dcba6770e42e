# ibtool trace on real Soft-RoCE traffic: perftest and ibv_rc_pingpong
# between two rxe devices, captured with tcpdump and reassembled.
#
# rxe hands a packet straight to the receiving QP when the destination MAC
# is its own netdev's, so tcpdump never sees traffic between two GIDs of
# one device. Here each end has its own rxe device on one end of a veth
# pair (veth_up in guest-test.sh).
step "trace: two rxe devices on a veth pair"
veth_up tveth0 tveth1 198.51.100.1 198.51.100.2
rdma link add rxet1 type rxe netdev tveth0
rdma link add rxet2 type rxe netdev tveth1
sleep 1
# gid_index DEV PATTERN: the index of the device's GID matching PATTERN.
gid_index() {
	for g in 0 1 2 3 4 5 6 7; do
		case $(cat /sys/class/infiniband/$1/ports/1/gids/$g 2>/dev/null) in
		$2) echo $g; return ;;
		esac
	done
}
v4a=$(gid_index rxet1 '*ffff:c633:6401'); v4b=$(gid_index rxet2 '*ffff:c633:6402')
v6a=$(gid_index rxet1 'fe80:*'); v6b=$(gid_index rxet2 'fe80:*')
mkdir -p "$H/out"

# capture NAME GIDA GIDB GIDFLAG CMD ARGS...: CMD's server on rxet2, its
# client on rxet1 to 198.51.100.2, captured on tveth0 into $H/out/NAME.pcap.
capture() {
	name=$1 ga=$2 gb=$3 gflag=$4
	shift 4
	tcpdump -i tveth0 -w /tmp/$name.pcap -U udp port 4791 >/tmp/$name.tcpdump 2>&1 &
	td=$!
	sleep 2
	timeout 90 "$@" -d rxet2 $gflag "$gb" >/tmp/$name.srv 2>&1 &
	srv=$!
	# perftest, ibv_rc_pingpong and rdma_bw all listen on TCP 18515: wait
	# for the server (a fixed pause lost the race once on a loaded host).
	wait_listen 18515
	timeout 80 "$@" -d rxet1 $gflag "$ga" 198.51.100.2 >/tmp/$name.cli 2>&1
	cli=$?
	wait $srv
	sleep 1
	kill $td
	wait $td
	cp /tmp/$name.pcap "$H/out/"
	if [ $cli -ne 0 ]; then
		echo "$* exited $cli"
		tail -n 5 /tmp/$name.cli /tmp/$name.srv /tmp/$name.tcpdump
		return 1
	fi
}

# check_trace NAME OP COUNT SIZE: ibtool trace finds COUNT messages of OP
# of SIZE bytes on one QP, none incomplete, no gap, duplicate or bad ICRC
# (--check), and every payload alike: perftest sends the same buffer over
# and over (its contents are random, so the bytes themselves are checked
# with ibv_rc_pingpong below; for messages of half a page or less perftest
# cycles through slots of a page, so sizes here are above 2048). Leaves the
# payloads in /tmp/NAME.out.
check_trace() {
	name=$1 op=$2 count=$3 size=$4
	rm -rf /tmp/$name.out
	if ! "$IBTOOL" trace --check --write /tmp/$name.out /tmp/$name.pcap >/tmp/$name.trace 2>&1; then
		fail "trace $name: ibtool trace --check found problems"
		grep '!' /tmp/$name.trace | head -10
		tail -1 /tmp/$name.trace
		return
	fi
	got=$(grep -c "^#[0-9].* $op PSN .* length $size\$" /tmp/$name.trace)
	files=$(ls /tmp/$name.out | wc -l)
	sums=$(cat /tmp/$name.out/* | wc -c)
	kinds=$(md5sum /tmp/$name.out/* | cut -d' ' -f1 | sort -u | wc -l)
	if [ "$got" -eq "$count" ] && [ "$files" -eq "$count" ] && [ "$sums" -eq $((count * size)) ] && [ "$kinds" -eq 1 ]; then
		pass "trace $name: $got $op messages of $size bytes, ICRCs good, no gaps, payloads alike ($(tail -1 /tmp/$name.trace | sed 's/^# //'))"
	else
		fail "trace $name: $got $op messages of $size bytes (want $count), $files payload files, $sums bytes, $kinds distinct payloads"
		head -20 /tmp/$name.trace
	fi
}

if capture write "$v4a" "$v4b" -x ib_write_bw -s 3000 -n 10 -F; then
	check_trace write "RDMA WRITE" 10 3000
else
	fail "trace write: ib_write_bw did not run"
fi
if capture read "$v4a" "$v4b" -x ib_read_bw -s 5000 -n 10 -F; then
	check_trace read "RDMA READ" 10 5000
	# Each READ request's R_Key, address and length, and 5 responses back.
	if grep -q '^#1 .* RDMA READ PSN .* (6 packets) rkey 0x[0-9a-f]* va 0x[0-9a-f]* length 5000$' /tmp/read.trace; then
		pass "trace read: requests matched with their 5 responses"
	else
		fail "trace read: requests not matched with their responses"
		head -3 /tmp/read.trace
	fi
else
	fail "trace read: ib_read_bw did not run"
fi
if capture send "$v4a" "$v4b" -x ib_send_bw -s 2050 -n 10 -F; then
	check_trace send "SEND" 10 2050
else
	fail "trace send: ib_send_bw did not run"
fi
# RoCEv2 over IPv6: the link-local GIDs.
if capture send6 "$v6a" "$v6b" -x ib_send_bw -s 2100 -n 5 -F; then
	check_trace send6 "SEND" 5 2100
else
	fail "trace send6: ib_send_bw over IPv6 GIDs did not run"
fi
# Bytes whose value is known: ibv_rc_pingpong fills its buffer with 0x7b
# and sends it both ways.
if capture pingpong "$v4a" "$v4b" -g ibv_rc_pingpong -s 3000 -n 5; then
	head -c 3000 /dev/zero | tr '\0' '\173' >/tmp/want.bin
	"$IBTOOL" trace --check --write /tmp/pingpong.out /tmp/pingpong.pcap >/tmp/pingpong.trace 2>&1
	ok=0 n=0
	for f in /tmp/pingpong.out/*; do
		n=$((n + 1))
		cmp -s "$f" /tmp/want.bin && ok=$((ok + 1))
	done
	if [ $n -eq 10 ] && [ $ok -eq 10 ]; then
		pass "trace pingpong: the 10 SENDs carry exactly the 3000 bytes of 0x7b sent"
	else
		fail "trace pingpong: $ok of $n payloads are the bytes sent (want 10 of 10)"
		head -10 /tmp/pingpong.trace
	fi
else
	fail "trace pingpong: ibv_rc_pingpong did not run"
fi

# ibtool's own rdma_bw: its client writes seeded pseudo-random bytes and
# its --json gives their SHA-256, which every reassembled WRITE must have.
if capture rdmabw "$v4a" "$v4b" -x "$IBTOOL" rdma_bw -s 3000 -n 10 --json; then
	check_trace rdmabw "RDMA WRITE" 10 3000
	want=$(grep -o '"sentSHA256": "[0-9a-f]*"' /tmp/rdmabw.cli | cut -d'"' -f4)
	n=$(ls /tmp/rdmabw.out | wc -l)
	ok=$(sha256sum /tmp/rdmabw.out/* | cut -d' ' -f1 | grep -c "^$want\$")
	if [ -n "$want" ] && [ "$n" -eq 10 ] && [ "$ok" -eq 10 ]; then
		pass "trace rdmabw: the 10 RDMA WRITEs carry exactly the bytes rdma_bw wrote (SHA-256 ${want%"${want#????????????}"}...)"
	else
		fail "trace rdmabw: $ok of $n payloads have the SHA-256 rdma_bw reports ($want)"
		head -20 /tmp/rdmabw.cli
	fi
else
	fail "trace rdmabw: rdma_bw did not run"
fi

rdma link delete rxet1
rdma link delete rxet2
veth_down tveth0 tveth1
