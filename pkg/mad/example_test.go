package mad_test

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// ExamplePortInfo_UnmarshalBinary decodes the 64 bytes of a PortInfo as
// an SMP's data carries them, and encodes a change back.
func ExamplePortInfo_UnmarshalBinary() {
	data := make([]byte, 64)
	data[16], data[17] = 0x00, 0x0c // LID 12
	data[32] = 0x04                 // LinkState Active, the low nibble of byte 32
	var pi mad.PortInfo
	if err := pi.UnmarshalBinary(data); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pi.LID, pi.LinkState)

	pi.LinkState = mad.PortStateDown
	out, _ := pi.MarshalBinary()
	fmt.Println(len(out), out[32]&0xf)
	// Output:
	// 12 Active
	// 64 1
}

// ExampleDRPath names a directed route as the tools take it ("0,1,3": out
// of the local port 1, then port 3) and the header of a Get along it.
func ExampleDRPath() {
	p := mad.DRPath(0, 1, 3)
	fmt.Println(p, p.Hops())

	h := mad.Header{BaseVersion: mad.BaseVersion, MgmtClass: mad.ClassSMIDirect, ClassVersion: 1,
		Method: mad.MethodGet, TID: 1, AttrID: mad.AttrNodeInfo}
	buf := make([]byte, mad.Size)
	if err := h.MarshalTo(buf); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", buf[:4])
	// Output:
	// DR path slid 65535; dlid 65535; 0,1,3 2
	// 01 81 01 01
}

// ExamplePMACapabilities_ResetMask builds the Set that clears a port's
// error counters and PortXmitWait on a PMA that counts PortXmitWait.
func ExamplePMACapabilities_ResetMask() {
	caps := mad.PMACapabilities{Mask: mad.PMAXmitWait}
	names := append(append([]string(nil), mad.PortErrorCounters...), "PortXmitWait")
	l := (&mad.PortCounters{}).Layout()
	mask := caps.ResetMask(l, names...)
	var set mad.PortCounters
	if err := set.UnmarshalBinary(mad.ResetData(l, 1, mask)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("mask %#x: CounterSelect %#x, CounterSelect2 %#x\n", mask, set.CounterSelect, set.CounterSelect2)
	// Output: mask 0x10fff: CounterSelect 0xfff, CounterSelect2 0x1
}
