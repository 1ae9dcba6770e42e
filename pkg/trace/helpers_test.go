package trace

import (
	"bytes"
	"testing"
	"time"
)

// Addresses of the two ends in the synthetic captures.
const (
	hostA = "192.0.2.1"
	hostB = "192.0.2.2"
)

// rc builds an RC packet from hostA to QP qp at hostB.
func rc(op Operation, qp, psn uint32, payload []byte) *Packet {
	return &Packet{Encap: EncapRoCEv2, Src: hostA, Dst: hostB, UDPSrcPort: 49152,
		BTH: BTH{Opcode: Opcode(op), PKey: 0xffff, DestQP: qp, PSN: psn & 0xffffff}, Payload: payload}
}

// reply builds an RC response from hostB to the requester's QP.
func reply(op Operation, qp, psn uint32, payload []byte) *Packet {
	p := rc(op, qp, psn, payload)
	p.Src, p.Dst = hostB, hostA
	if set, _ := headersOf(p.BTH.Opcode); set&hasAETH != 0 {
		p.AETH = &AETH{Syndrome: 0x1f}
	}
	return p
}

func withRETH(p *Packet, va uint64, rkey, n uint32) *Packet {
	p.RETH = &RETH{VA: va, RKey: rkey, DMALength: n}
	return p
}

// fill returns n bytes counting up from start.
func fill(start byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// encodeAll encodes packets into frames numbered from 1.
func encodeAll(t *testing.T, ps []*Packet, o EncodeOptions) []Frame {
	t.Helper()
	var fs []Frame
	for i, p := range ps {
		b, err := Encode(p, o)
		if err != nil {
			t.Fatalf("encode packet %d: %v", i+1, err)
		}
		link := o.Link
		if link == 0 {
			link = LinkEthernet
		}
		fs = append(fs, Frame{Number: i + 1, Time: time.Unix(1700000000, int64(i)*1000).UTC(), Link: link, Data: b, OrigLen: len(b)})
	}
	return fs
}

// reassemble decodes frames and reassembles them.
func reassemble(fs []Frame) *Result {
	r := NewReassembler()
	for _, f := range fs {
		r.Add(Decode(f, DecodeOptions{}))
	}
	return r.Finish()
}

// writeCapture writes frames as pcap (or pcapng).
func writeCapture(t *testing.T, fs []Frame, ng bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	newW := NewPcapWriter
	if ng {
		newW = NewPcapngWriter
	}
	w, err := newW(&buf, fs[0].Link)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if err := w.WriteFrame(f.Time, f.Data, f.OrigLen); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}
