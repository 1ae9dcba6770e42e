// Command rdmawrite moves data between two processes with RDMA WRITE and
// READ on a reliable-connected queue pair, the queue pair addresses
// exchanged over TCP. The client writes a message into the server's
// memory, then reads back the server's own message:
//
//	rdmawrite -s                  # on the server
//	rdmawrite -d rxe0 server.host # on the client
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// peer is what each side tells the other: where its QP and memory are.
type peer struct {
	LID       uint16
	QPN, RKey uint32
	GID       [16]byte
	Addr      uint64
}

func main() {
	dev := flag.String("d", "", "RDMA device (default: the first)")
	gidx := flag.Int("g", 0, "GID index (RoCE)")
	tcp := flag.String("p", "18515", "TCP port of the exchange")
	server := flag.Bool("s", false, "be the server")
	flag.Parse()
	ctx, err := verbs.Open(*dev)
	check(err)
	pd, err := ctx.AllocPD()
	check(err)
	mr, err := pd.AllocMR(4096, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead)
	check(err)
	cq, err := ctx.CreateCQ(16, nil)
	check(err)
	qp, err := pd.CreateQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, SignalAll: true,
		Caps: verbs.QPCaps{MaxSendWR: 4, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	check(err)
	check(qp.Init(verbs.InitAttr{Port: 1, Access: verbs.AccessRemoteWrite | verbs.AccessRemoteRead}))
	port, err := ctx.QueryPort(1)
	check(err)
	gid, err := ctx.QueryGID(1, *gidx)
	check(err)
	copy(mr.Bytes()[2048:], fmt.Sprintf("hello from the other side, pid %d", os.Getpid()))

	var conn net.Conn
	if *server {
		l, err := net.Listen("tcp", ":"+*tcp)
		check(err)
		conn, err = l.Accept()
		check(err)
		l.Close()
	} else {
		conn, err = net.Dial("tcp", net.JoinHostPort(flag.Arg(0), *tcp))
		check(err)
	}
	var them peer
	check(json.NewEncoder(conn).Encode(peer{LID: port.LID, QPN: qp.Num(), RKey: mr.RKey(), GID: gid, Addr: mr.Addr()}))
	check(json.NewDecoder(conn).Decode(&them))
	rtr := verbs.RTRAttr{PathMTU: verbs.MTU1024, DestQPN: them.QPN, DLID: them.LID, MaxDestRdAtomic: 1, MinRNRTimer: 12}
	if port.LinkLayer == verbs.LinkLayerEthernet {
		rtr.GRH = &verbs.GRH{DGID: them.GID, SGIDIndex: *gidx, HopLimit: 1}
	}
	check(qp.ReadyToReceive(rtr))
	check(qp.ReadyToSend(verbs.RTSAttr{Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}))

	if *server { // the client does the work, then closes the connection
		conn.Read(make([]byte, 1))
		fmt.Printf("the client wrote: %q\n", cstring(mr.Bytes()[:2048]))
		return
	}
	msg := fmt.Sprintf("hello from the client, pid %d", os.Getpid())
	copy(mr.Bytes(), msg+"\x00")
	do(qp, cq, verbs.SendWR{ID: 1, Op: verbs.OpRDMAWrite, MR: mr, Length: len(msg) + 1, RemoteAddr: them.Addr, RKey: them.RKey})
	do(qp, cq, verbs.SendWR{ID: 2, Op: verbs.OpRDMARead, MR: mr, Offset: 1024, Length: 1024, RemoteAddr: them.Addr + 2048, RKey: them.RKey})
	fmt.Printf("wrote %q, read %q\n", msg, cstring(mr.Bytes()[1024:2048]))
	conn.Close()
}

// do posts one work request and waits for its completion.
func do(qp *verbs.QP, cq *verbs.CQ, wr verbs.SendWR) {
	check(qp.PostSend(wr))
	_, err := cq.Next(context.Background())
	check(err)
}

// check ends the program on an error; the kernel releases what it held.
func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "rdmawrite:", err)
		os.Exit(3)
	}
}

func cstring(b []byte) string { s, _, _ := strings.Cut(string(b), "\x00"); return s }
