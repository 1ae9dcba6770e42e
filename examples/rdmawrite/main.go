// Command rdmawrite moves data between two processes with RDMA WRITE and
// READ on a reliable-connected queue pair, the queue pair addresses
// exchanged over TCP. The client writes a message into the server's
// memory, then reads back the server's own message:
//
//	rdmawrite -s                  # on the server
//	rdmawrite -d rxe0 server.host # on the client
package main

import (
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
	LID  uint16
	QPN  uint32
	GID  [16]byte
	Addr uint64
	RKey uint32
}

func main() {
	dev := flag.String("d", "", "RDMA device (default: the first)")
	gidx := flag.Int("g", 0, "GID index (RoCE)")
	port := flag.String("p", "18515", "TCP port of the exchange")
	server := flag.Bool("s", false, "be the server")
	flag.Parse()
	if err := run(*dev, *gidx, *server, net.JoinHostPort(flag.Arg(0), *port)); err != nil {
		fmt.Fprintln(os.Stderr, "rdmawrite:", err)
		os.Exit(3)
	}
}

func run(dev string, gidx int, server bool, addr string) error {
	ctx, err := verbs.Open(dev)
	if err != nil {
		return err
	}
	defer ctx.Close()
	pd, err := ctx.AllocPD()
	if err != nil {
		return err
	}
	defer pd.Close()
	mr, err := pd.AllocMR(4096, verbs.AccessLocalWrite|verbs.AccessRemoteWrite|verbs.AccessRemoteRead)
	if err != nil {
		return err
	}
	defer mr.Close()
	cq, err := ctx.CreateCQ(16, nil)
	if err != nil {
		return err
	}
	defer cq.Close()
	qp, err := pd.CreateQP(verbs.QPConfig{SendCQ: cq, RecvCQ: cq, SignalAll: true,
		Caps: verbs.QPCaps{MaxSendWR: 4, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		return err
	}
	defer qp.Close()
	if err := qp.Init(verbs.InitAttr{Port: 1, Access: verbs.AccessRemoteWrite | verbs.AccessRemoteRead}); err != nil {
		return err
	}
	pi, err := ctx.QueryPort(1)
	if err != nil {
		return err
	}
	gid, err := ctx.QueryGID(1, gidx)
	if err != nil {
		return err
	}
	copy(mr.Bytes()[2048:], fmt.Sprintf("hello from the %s, pid %d", role(server), os.Getpid()))
	conn, err := connect(server, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	me := peer{LID: pi.LID, QPN: qp.Num(), GID: gid, Addr: mr.Addr(), RKey: mr.RKey()}
	var them peer
	if err := json.NewEncoder(conn).Encode(me); err != nil {
		return err
	}
	if err := json.NewDecoder(conn).Decode(&them); err != nil {
		return fmt.Errorf("reading the peer's address: %w", err)
	}
	rtr := verbs.RTRAttr{PathMTU: verbs.MTU1024, DestQPN: them.QPN, DLID: them.LID, MaxDestRdAtomic: 1, MinRNRTimer: 12}
	if pi.LinkLayer == verbs.LinkLayerEthernet {
		rtr.GRH = &verbs.GRH{DGID: them.GID, SGIDIndex: gidx, HopLimit: 1}
	}
	if err := qp.ReadyToReceive(rtr); err != nil {
		return err
	}
	if err := qp.ReadyToSend(verbs.RTSAttr{Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1}); err != nil {
		return err
	}
	if server { // the client does the work; its closing the connection says it is done
		buf := make([]byte, 1)
		conn.Read(buf)
		fmt.Printf("the client wrote: %q\n", cstring(mr.Bytes()[:2048]))
		return nil
	}
	msg := fmt.Sprintf("hello from the client, pid %d", os.Getpid())
	copy(mr.Bytes(), msg)
	if err := do(qp, cq, verbs.SendWR{ID: 1, Op: verbs.OpRDMAWrite, MR: mr, Length: len(msg) + 1, RemoteAddr: them.Addr, RKey: them.RKey}); err != nil {
		return err
	}
	if err := do(qp, cq, verbs.SendWR{ID: 2, Op: verbs.OpRDMARead, MR: mr, Offset: 1024, Length: 1024, RemoteAddr: them.Addr + 2048, RKey: them.RKey}); err != nil {
		return err
	}
	fmt.Printf("wrote %q, read %q\n", msg, cstring(mr.Bytes()[1024:2048]))
	return nil
}

// do posts one work request and waits for its completion.
func do(qp *verbs.QP, cq *verbs.CQ, wr verbs.SendWR) error {
	if err := qp.PostSend(wr); err != nil {
		return err
	}
	wc := make([]verbs.WorkCompletion, 1)
	for {
		n, err := cq.Poll(wc)
		if err != nil || n == 1 {
			if err == nil {
				err = wc[0].Err(cq)
			}
			return err
		}
	}
}

func connect(server bool, addr string) (net.Conn, error) {
	if !server {
		return net.Dial("tcp", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Accept()
}

func role(server bool) string {
	if server {
		return "server"
	}
	return "client"
}

func cstring(b []byte) string { s, _, _ := strings.Cut(string(b), "\x00"); return s }
