package trace_test

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ibtool/ibtool/pkg/trace"
)

// ExampleReassembler reads a capture of a Soft-RoCE RDMA WRITE (tcpdump
// on the rxe device's network interface), decodes each frame and puts the
// messages of each queue pair back together.
func ExampleReassembler() {
	f, err := os.Open("testdata/rxe-write.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	c, err := trace.ReadCapture(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := trace.NewReassembler()
	for {
		fr, err := c.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		r.Add(trace.Decode(fr, trace.DecodeOptions{}))
	}
	res := r.Finish()
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
