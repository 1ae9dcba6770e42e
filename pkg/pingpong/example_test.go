package pingpong_test

import (
	"fmt"
	"net"

	"github.com/ibtool/ibtool/pkg/pingpong"
)

// ExampleConn exchanges queue pair addresses as ibv_rc_pingpong's two
// sides do over TCP: the client sends its address first, the server
// answers with its own. Here the two ends of a net.Pipe stand for the
// TCP connection Dial and Accept make.
func ExampleConn() {
	a, b := net.Pipe()
	client, server := pingpong.NewConn(a), pingpong.NewConn(b)
	defer client.Close()
	defer server.Close()

	mine := pingpong.Dest{LID: 5, QPN: 0x11, PSN: 0x123456}
	go func() {
		peer, err := server.Recv()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("server got LID %d QPN %#06x PSN %#06x\n", peer.LID, peer.QPN, peer.PSN)
		server.Send(pingpong.Dest{LID: 7, QPN: 0x12, PSN: 0x654321})
	}()
	if err := client.Send(mine); err != nil {
		fmt.Println(err)
		return
	}
	peer, err := client.Recv()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("client got LID %d QPN %#06x PSN %#06x\n", peer.LID, peer.QPN, peer.PSN)
	fmt.Printf("on the wire: %q\n", mine.Wire())
	// Output:
	// server got LID 5 QPN 0x000011 PSN 0x123456
	// client got LID 7 QPN 0x000012 PSN 0x654321
	// on the wire: "0005:000011:123456:00000000000000000000000000000000\x00"
}
