package trace_test

import (
	"fmt"
	"os"

	"github.com/ibtool/ibtool/pkg/trace"
)

// ExampleReadAll reads a capture of a Soft-RoCE RDMA WRITE (tcpdump on the
// rxe device's network interface), decodes each frame and puts the
// messages of each queue pair back together.
func ExampleReadAll() {
	f, err := os.Open("testdata/rxe-write.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	res, err := trace.ReadAll(f, trace.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d frames, %d RDMA packets\n", res.Frames, res.Packets)
	for _, qp := range res.QPs {
		fmt.Printf("QP %d %s -> %s: %d messages, %d bytes\n", qp.QP, qp.Src, qp.Dst, qp.Messages, qp.Bytes)
	}
	for _, m := range res.Messages[:2] {
		fmt.Printf("#%d %s to QP %d: %d packets, %d bytes\n", m.Index, m.Op, m.QP, m.Packets, m.Length)
	}
	// Output:
	// 40 frames, 40 RDMA packets
	// QP 17 198.51.100.1 -> 198.51.100.2: 10 messages, 30000 bytes
	// #1 RDMA WRITE to QP 17: 3 packets, 3000 bytes
	// #2 RDMA WRITE to QP 17: 3 packets, 3000 bytes
}

// ExampleResult_connections reads the kernel NFS client's mount over
// Soft-RoCE: rdma_cm's REQ, REP and RTU set up each connection (the REQ
// carries the client's address and port), and every queue pair names the
// connection it belongs to.
func ExampleResult_connections() {
	f, err := os.Open("testdata/nfs-rxe-v41.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	res, err := trace.ReadAll(f, trace.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range res.Messages[:3] {
		fmt.Printf("frame %d CM %v\n", m.Frame, m.CM.Type)
	}
	h := res.Messages[0].CM.RDMACM
	fmt.Printf("rdma_cm %s:%d > %s:%d\n", h.Src, h.SrcPort, h.Dst, h.DstPort)
	for _, conn := range res.Connections {
		fmt.Printf("connection %d %s: QP %d > QP %d from PSN %#x, %s\n", conn.Index, conn.Service, *conn.ActiveQP,
			*conn.PassiveQP, *conn.ActivePSN, conn.State)
	}
	for _, qp := range res.QPs[2:4] {
		fmt.Printf("QP %d %s -> %s: connection %d\n", qp.QP, qp.Src, qp.Dst, qp.Connection)
	}
	// Output:
	// frame 1 CM REQ
	// frame 2 CM REP
	// frame 3 CM RTU
	// rdma_cm 203.0.113.1:55716 > 203.0.113.2:20049
	// connection 1 rdma_cm TCP port 20049: QP 17 > QP 17 from PSN 0x190c2c, disconnected
	// connection 2 rdma_cm TCP port 20049: QP 18 > QP 18 from PSN 0x434aad, disconnected
	// QP 17 203.0.113.1 -> 203.0.113.2: connection 1
	// QP 17 203.0.113.2 -> 203.0.113.1: connection 1
}
