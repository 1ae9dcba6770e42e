package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// captureSum is what a real capture decodes to.
type captureSum struct {
	Link       LinkType
	Frames     int
	Messages   int
	Events     int
	BadICRC    int
	Ops        map[MessageOp]int
	Lengths    map[int]int    // message length → messages
	Packets    map[int]int    // packets per message → messages
	RKeys      map[uint32]int // R_Key → messages
	Incomplete int
	// Payloads counts messages by the first 8 bytes of their payload's
	// SHA-256, in hex.
	Payloads map[string]int
}

func readCaptureFile(t *testing.T, path string) (*Result, captureSum) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ReadCapture(f)
	if err != nil {
		t.Fatal(err)
	}
	s := captureSum{Ops: map[MessageOp]int{}, Lengths: map[int]int{}, Packets: map[int]int{}, RKeys: map[uint32]int{},
		Payloads: map[string]int{}}
	r := NewReassembler()
	for {
		fr, err := c.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := Decode(fr, DecodeOptions{})
		if p.ICRCStatus == ICRCBad {
			s.BadICRC++
		}
		r.Add(p)
	}
	res := r.Finish()
	s.Link, s.Frames, s.Messages, s.Events = c.LinkType(), res.Frames, len(res.Messages), len(res.Events)
	for _, m := range res.Messages {
		s.Ops[m.Op]++
		s.Lengths[m.Length]++
		s.Packets[m.Packets]++
		if m.RKey != nil {
			s.RKeys[*m.RKey]++
		}
		if !m.Complete {
			s.Incomplete++
		}
		sum := sha256.Sum256(m.Payload)
		s.Payloads[hex.EncodeToString(sum[:8])]++
	}
	return res, s
}

// TestRealCaptures pins what the captures in testdata/ decode to. They
// were taken by scripts/vm/checks/30-trace.sh in the test guest (Debian
// bookworm, kernel 6.1, Soft-RoCE): tcpdump on one end of a veth pair
// between two rxe devices, path MTU 1024, perftest 4.5's ib_write_bw -s
// 3000, ib_read_bw -s 5000 and ib_send_bw -s 2050 (-n 10 each), ib_send_bw
// -s 2100 -n 5 between the IPv6 link-local GIDs, and ibv_rc_pingpong -s
// 3000 -n 5, whose buffer is 0x7b bytes. Every ICRC is good (rxe computed
// them), which pins the ICRC computation on IPv4 and IPv6.
func TestRealCaptures(t *testing.T) {
	tests := []struct {
		file string
		want captureSum
	}{
		{"rxe-write.pcap", captureSum{Link: LinkEthernet, Frames: 40, Messages: 10, Ops: map[MessageOp]int{MsgWrite: 10},
			Lengths: map[int]int{3000: 10}, Packets: map[int]int{3: 10}, RKeys: map[uint32]int{0x2d2: 10},
			Payloads: map[string]int{"5bb19435809009e3": 10}}},
		{"rxe-read.pcap", captureSum{Link: LinkEthernet, Frames: 60, Messages: 10, Ops: map[MessageOp]int{MsgRead: 10},
			Lengths: map[int]int{5000: 10}, Packets: map[int]int{6: 10}, RKeys: map[uint32]int{0x362: 10},
			Payloads: map[string]int{"e24240dda5141630": 10}}},
		{"rxe-send.pcap", captureSum{Link: LinkEthernet, Frames: 40, Messages: 10, Ops: map[MessageOp]int{MsgSend: 10},
			Lengths: map[int]int{2050: 10}, Packets: map[int]int{3: 10}, RKeys: map[uint32]int{},
			Payloads: map[string]int{"e5363fb6d43ca8e1": 10}}},
		{"rxe-send6.pcap", captureSum{Link: LinkEthernet, Frames: 20, Messages: 5, Ops: map[MessageOp]int{MsgSend: 5},
			Lengths: map[int]int{2100: 5}, Packets: map[int]int{3: 5}, RKeys: map[uint32]int{},
			Payloads: map[string]int{"77d06f00a687382a": 5}}},
		{"rxe-pingpong.pcap", captureSum{Link: LinkEthernet, Frames: 40, Messages: 10, Ops: map[MessageOp]int{MsgSend: 10},
			Lengths: map[int]int{3000: 10}, Packets: map[int]int{3: 10}, RKeys: map[uint32]int{},
			Payloads: map[string]int{"6f9eeb72a1d34e80": 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res, got := readCaptureFile(t, filepath.Join("testdata", tt.file))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected decoding (-want +got):\n%s", diff)
			}
			if tt.file == "rxe-pingpong.pcap" {
				for _, m := range res.Messages {
					if !bytes.Equal(m.Payload, bytes.Repeat([]byte{0x7b}, 3000)) {
						t.Errorf("message %d: not the 3000 bytes of 0x7b ibv_rc_pingpong sent", m.Index)
					}
				}
			}
		})
	}
}

// TestRealCaptureDamaged: a byte flipped in a real packet's payload makes
// its ICRC bad, and reassembly leaves the packet out and says so; the same
// capture cut to 100 bytes a frame keeps the headers and PSNs.
func TestRealCaptureDamaged(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "rxe-write.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCapture(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var fs []Frame
	for {
		f, err := c.Next()
		if err != nil {
			break
		}
		fs = append(fs, f)
	}
	flipped := append([]Frame(nil), fs...)
	flipped[1].Data = append([]byte(nil), fs[1].Data...)
	flipped[1].Data[100] ^= 1 // a byte of the second packet's payload
	ms, es := summarize(reassemble(flipped))
	if len(ms) != 10 || ms[0].Complete || !cmp.Equal(es, []EventKind{EventBadICRC, EventGap}) {
		t.Errorf("one byte flipped: %d messages, the first complete %v, events %v; want 10, false, [bad-icrc gap]", len(ms), ms[0].Complete, es)
	}
	cut := append([]Frame(nil), fs...)
	for i := range cut {
		cut[i].Data = cut[i].Data[:min(100, len(cut[i].Data))]
	}
	res := reassemble(cut)
	if len(res.Messages) != 10 || len(res.Events) != 0 || res.Messages[0].Length != 3000 || res.Messages[0].Complete {
		t.Errorf("snap length 100: %d messages, %d events, length %d, complete %v; want 10, 0, 3000, false",
			len(res.Messages), len(res.Events), res.Messages[0].Length, res.Messages[0].Complete)
	}
}
