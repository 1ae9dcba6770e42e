package trace

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzLinks are the link types FuzzDecode picks from with its first byte.
var fuzzLinks = []LinkType{LinkEthernet, LinkLinuxSLL, LinkLinuxSLL2, LinkRaw, LinkIPv4, LinkIPv6, LinkInfiniBand, LinkERF}

// FuzzDecode feeds arbitrary frames to Decode: it must not panic, and a
// packet that decodes must encode back into one that decodes the same.
func FuzzDecode(f *testing.F) {
	seeds := []*Packet{
		withRETH(rc(OpWriteFirst, 0x11, 1, fill(0, 33)), 1, 2, 3),
		reply(OpReadResponseLast, 0x12, 2, fill(0, 5)),
		reply(OpAcknowledge, 0x12, 2, nil),
	}
	for i, link := range fuzzLinks {
		for _, p := range seeds {
			q := *p
			if link == LinkInfiniBand {
				q.Encap, q.Src, q.Dst, q.LRH = EncapIB, LIDAddr(1), LIDAddr(2), &LRH{}
			}
			b, err := Encode(&q, EncodeOptions{Link: link})
			if err != nil {
				f.Fatal(err)
			}
			f.Add(byte(i), b)
		}
	}
	f.Fuzz(func(t *testing.T, pick byte, data []byte) {
		link := fuzzLinks[int(pick)%len(fuzzLinks)]
		p := Decode(Frame{Number: 1, Link: link, Data: data, OrigLen: len(data)}, DecodeOptions{})
		r := NewReassembler()
		r.Add(p)
		r.Finish()
		if p.Err != nil || !p.IsRDMA() || p.Truncated {
			return
		}
		out := LinkEthernet
		if p.Encap == EncapIB {
			out = LinkInfiniBand
		}
		b, err := Encode(p, EncodeOptions{Link: out})
		if err != nil {
			t.Fatalf("a decoded packet does not encode: %v", err)
		}
		q := Decode(Frame{Number: 1, Link: out, Data: b, OrigLen: len(b)}, DecodeOptions{})
		if q.Err != nil || q.ICRCStatus != ICRCGood {
			t.Fatalf("re-encoded packet: %v, ICRC %v", q.Err, q.ICRCStatus)
		}
		if diff := cmp.Diff(p.BTH.Opcode, q.BTH.Opcode); diff != "" || !bytes.Equal(p.Payload, q.Payload) ||
			!cmp.Equal(p.ExtHeaders, q.ExtHeaders) || p.BTH.PSN != q.BTH.PSN || p.BTH.DestQP != q.BTH.DestQP {
			t.Fatalf("round trip changed the packet:\n%+v\n%+v", p, q)
		}
	})
}

// FuzzReadCapture feeds arbitrary files to the capture reader: errors,
// never panics or runaway allocations.
func FuzzReadCapture(f *testing.F) {
	fs := []Frame{{Number: 1, Link: LinkEthernet, Data: []byte{1, 2, 3}, OrigLen: 3}}
	for _, ng := range []bool{false, true} {
		var buf bytes.Buffer
		newW := NewPcapWriter
		if ng {
			newW = NewPcapngWriter
		}
		w, _ := newW(&buf, LinkEthernet)
		w.WriteFrame(fs[0].Time, fs[0].Data, 0)
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCapture(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 0; i < 1000; i++ {
			if _, err := c.Next(); err != nil {
				return
			}
		}
	})
}
