package perftest_test

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/perftest"
)

// A side's QP address as perftest sends it in a handshake, and the peer's
// decoded from the bytes received.
func ExampleDest() {
	mine := perftest.Dest{QPN: 0x11, PSN: 0x62f4bc, RKey: 0xa32, VAddr: 0x7f0765113000}
	msg, _ := mine.MarshalBinary()
	fmt.Println(len(msg), "bytes")

	var theirs perftest.Dest
	if err := theirs.UnmarshalBinary(msg); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("QPN %#x PSN %#x RKey %#x VAddr %#x\n", theirs.QPN, theirs.PSN, theirs.RKey, theirs.VAddr)
	fmt.Println(theirs.UnmarshalBinary(msg[:48]))
	// Output:
	// 56 bytes
	// QPN 0x11 PSN 0x62f4bc RKey 0xa32 VAddr 0x7f0765113000
	// a QP address of 48 bytes, perftest's has 56
}

// The version messages of the exchange's start: a peer older than the
// exchange this package speaks is refused.
func ExampleParseVersion() {
	v, err := perftest.ParseVersion(perftest.AppendVersion(nil, perftest.Version))
	fmt.Println(v, err)
	_, err = perftest.ParseVersion(perftest.AppendVersion(nil, "5.60"))
	fmt.Println(err)
	// Output:
	// 6.06 <nil>
	// the peer's perftest version 5.60 is older than 5.70, whose exchange this follows
}

// A report goes as five messages and comes back whole.
func ExampleReport() {
	r := perftest.Report{Size: 65536, Iters: 5000, Peak: 43.82, Average: 41.39, MsgRate: 0.000662}
	msgs := r.Messages()
	back, err := perftest.ParseReport(msgs)
	fmt.Println(len(msgs), back == r, err)
	// Output:
	// 5 true <nil>
}
