// Command tracecapture reads a packet capture of RDMA traffic (pcap or
// pcapng: RoCE, InfiniBand, iWARP) and prints each queue pair's messages.
//
//	tracecapture rdma.pcap
package main

import (
	"fmt"
	"os"

	"github.com/ibtool/ibtool/pkg/trace"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tracecapture FILE")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "tracecapture:", err)
		os.Exit(3)
	}
}

func run(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	res, err := trace.ReadAll(f, trace.ReadOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, qp := range res.QPs {
		fmt.Printf("QP %d %s -> %s (%s): %d messages, %d bytes\n", qp.QP, qp.Src, qp.Dst, qp.Transport, qp.Messages, qp.Bytes)
		for _, m := range res.Messages {
			if m.QP == qp.QP && m.Src == qp.Src && m.Dst == qp.Dst {
				fmt.Printf("  #%d frame %d %s PSN %d-%d, %d packets, %d bytes\n", m.Index, m.Frame, m.Op, m.FirstPSN, m.LastPSN, m.Packets, m.Length)
			}
		}
	}
	for _, e := range res.Events {
		fmt.Printf("frame %d: %s: %s\n", e.Frame, e.Kind, e.Detail)
	}
	return nil
}
