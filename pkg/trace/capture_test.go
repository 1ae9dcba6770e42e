package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCaptureRoundTrip writes every link type as pcap and pcapng and
// reads the same frames, and the same messages, back.
func TestCaptureRoundTrip(t *testing.T) {
	ps := []*Packet{withRETH(rc(OpWriteFirst, 0x11, 1, fill(0, 1024)), 1, 2, 1030), rc(OpWriteLast, 0x11, 2, fill(1, 6))}
	ib := func() []*Packet {
		var out []*Packet
		for _, p := range ps {
			q := *p
			q.Encap, q.Src, q.Dst, q.LRH = EncapIB, LIDAddr(1), LIDAddr(2), &LRH{SLID: 1, DLID: 2}
			out = append(out, &q)
		}
		return out
	}
	v1 := func() []*Packet {
		var out []*Packet
		for _, p := range ps {
			q := *p
			q.Encap, q.Src, q.Dst, q.UDPSrcPort = EncapRoCEv1, "fe80::1", "fe80::2", 0
			out = append(out, &q)
		}
		return out
	}
	for _, link := range []LinkType{LinkEthernet, LinkLinuxSLL, LinkLinuxSLL2, LinkRaw, LinkIPv4, LinkERF, LinkInfiniBand} {
		for _, ng := range []bool{false, true} {
			in := ps
			if link == LinkInfiniBand {
				in = ib()
			}
			name := link.String()
			if ng {
				name += " pcapng"
			}
			t.Run(name, func(t *testing.T) {
				fs := encodeAll(t, in, EncodeOptions{Link: link})
				c, err := ReadCapture(bytes.NewReader(writeCapture(t, fs, ng)))
				if err != nil {
					t.Fatal(err)
				}
				var got []Frame
				for {
					f, err := c.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, f)
				}
				if diff := cmp.Diff(fs, got); diff != "" {
					t.Fatalf("unexpected frames (-want +got):\n%s", diff)
				}
				if c.LinkType() != link {
					t.Errorf("link type %v, want %v", c.LinkType(), link)
				}
				ms, es := summarize(reassemble(got))
				want := []msgSum{{MsgWrite, 0x11, [2]uint32{1, 2}, 2, 1030, true, 0, 0}}
				if diff := cmp.Diff(want, ms); diff != "" || len(es) > 0 {
					t.Errorf("unexpected messages (-want +got):\n%s\nevents %v", diff, es)
				}
			})
		}
	}
	t.Run("RoCEv1", func(t *testing.T) {
		ms, _ := summarize(reassemble(encodeAll(t, v1(), EncodeOptions{})))
		if len(ms) != 1 || !ms[0].Complete {
			t.Errorf("messages %v, want one complete WRITE", ms)
		}
	})
}

func TestCaptureFaults(t *testing.T) {
	fs := encodeAll(t, []*Packet{rc(OpSendOnly, 0x11, 1, fill(0, 8)), rc(OpSendOnly, 0x11, 2, fill(0, 8))}, EncodeOptions{})
	pcap := writeCapture(t, fs, false)
	ng := writeCapture(t, fs, true)
	bigEndian := append([]byte(nil), pcap...)
	// The same pcap file written by a big-endian machine.
	for _, off := range []int{0, 8, 12, 16, 20} {
		binary.BigEndian.PutUint32(bigEndian[off:], binary.LittleEndian.Uint32(pcap[off:]))
	}
	binary.BigEndian.PutUint16(bigEndian[4:], 2)
	binary.BigEndian.PutUint16(bigEndian[6:], 4)
	for _, rec := range []int{24, 24 + 16 + len(fs[0].Data)} {
		for _, off := range []int{0, 4, 8, 12} {
			binary.BigEndian.PutUint32(bigEndian[rec+off:], binary.LittleEndian.Uint32(pcap[rec+off:]))
		}
	}
	tests := []struct {
		name   string
		data   []byte
		frames int
		err    error // after the frames; nil for io.EOF
		open   bool  // ReadCapture itself fails
	}{
		{"pcap", pcap, 2, nil, false},
		{"big-endian pcap", bigEndian, 2, nil, false},
		{"pcapng", ng, 2, nil, false},
		{"pcap cut in a record", pcap[:len(pcap)-3], 1, io.ErrUnexpectedEOF, false},
		{"pcapng cut in a block", ng[:len(ng)-3], 1, io.ErrUnexpectedEOF, false},
		{"pcap cut in the header", pcap[:10], 0, nil, true},
		{"not a capture", []byte("hello, world, this is text"), 0, nil, true},
		{"empty", nil, 0, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ReadCapture(bytes.NewReader(tt.data))
			if tt.open {
				if err == nil {
					t.Fatal("ReadCapture succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				_, err = c.Next()
				if err != nil {
					break
				}
				n++
			}
			want := tt.err
			if want == nil {
				want = io.EOF
			}
			if n != tt.frames || !errors.Is(err, want) {
				t.Errorf("%d frames then %v; want %d then %v", n, err, tt.frames, want)
			}
		})
	}
}
