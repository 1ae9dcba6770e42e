package verbs_test

import (
	"fmt"
	"net/netip"

	"github.com/ibtool/ibtool/pkg/verbs"
)

// A UD server replies to a datagram it received on RoCE v2 over IPv4:
// the receive buffer's first 40 bytes held the IPv4 header (in their
// last 20), and the reply goes from the port's GID the datagram was sent
// to back to its sender.
func ExampleReplyAHAttr() {
	port := verbs.Port{GIDs: []verbs.GID{
		{Index: 0, Raw: netip.MustParseAddr("fe80::1").As16(), Type: verbs.GIDTypeIBRoCEv1},
		{Index: 1, Raw: netip.MustParseAddr("::ffff:198.51.100.2").As16(), Type: verbs.GIDTypeRoCEv2},
	}}
	grh := make([]byte, verbs.GRHSize)
	copy(grh[20:], []byte{0x45, 0, 0, 100, 0, 0, 0x40, 0, 64, 17, 0, 0, 198, 51, 100, 1, 198, 51, 100, 2})
	a, err := verbs.ReplyAHAttr(port, 1, verbs.WorkCompletion{GRH: true}, grh)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(netip.AddrFrom16(a.GRH.DGID), "from GID index", a.GRH.SGIDIndex, "hop limit", a.GRH.HopLimit)
	// Output: ::ffff:198.51.100.1 from GID index 1 hop limit 64
}
