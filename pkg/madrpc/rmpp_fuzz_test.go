package madrpc

import (
	"errors"
	"testing"

	"github.com/ibtool/ibtool/pkg/mad"
)

// FuzzRMPPReceiver feeds the receiver arbitrary MADs (the input cut in
// Size-byte pieces) and checks it never panics, keeps only segments past
// a gap that the window granted (a window's worth at most), and keeps a
// whole message consistent.
func FuzzRMPPReceiver(f *testing.F) {
	msg := make([]byte, 56+450)
	for i := range msg {
		msg[i] = byte(i)
	}
	(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeData, Flags: mad.RMPPActive}).MarshalTo(msg)
	var seed []byte
	for _, s := range RMPPSegments(msg, 56) {
		seed = append(seed, s...)
	}
	f.Add(seed)
	f.Add(seed[mad.Size:])
	f.Add(append(append([]byte(nil), seed[:mad.Size]...), seed...))
	swapped := append([]byte(nil), seed...)
	copy(swapped[mad.Size:], seed[2*mad.Size:3*mad.Size])
	copy(swapped[2*mad.Size:], seed[mad.Size:2*mad.Size])
	f.Add(swapped)
	rmppPrealloc = 1 << 16 // a 64 MiB buffer an input at a time would leave little time for fuzzing
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newRMPPReceiver(56)
		for len(in) > 0 {
			n := min(len(in), mad.Size)
			step, err := r.add(in[:n])
			in = in[n:]
			var pe *rmppProtoError
			var re *RMPPError
			if err != nil && !errors.As(err, &pe) && !errors.As(err, &re) {
				t.Fatalf("error %T: %v", err, err)
			}
			if err != nil {
				return
			}
			if len(r.ahead) > int(r.window) {
				t.Fatalf("%d segments kept past a gap, window %d", len(r.ahead), r.window)
			}
			for seg := range r.ahead {
				if seg <= r.next || seg > r.winLast {
					t.Fatalf("segment %d kept, expecting %d, window to %d", seg, r.next, r.winLast)
				}
			}
			if step.ack && (step.seg != r.next-1 || step.win < step.seg) {
				t.Fatalf("ACK of %d with window %d, expecting %d", step.seg, step.win, r.next)
			}
			if step.done {
				m := r.message()
				if len(m) < 56 || len(m) > 56+int(r.next-1)*(mad.Size-56) {
					t.Fatalf("message of %d bytes after %d segments", len(m), r.next-1)
				}
			}
		}
	})
}

// FuzzRMPPSender feeds a sender of an n-segment message arbitrary answers
// (the input cut in Size-byte pieces; an empty piece is a timeout) and
// checks it never panics, never sends a segment beyond the message or the
// window granted, and is done only when the last segment is acknowledged
// or the transfer ended.
func FuzzRMPPSender(f *testing.F) {
	ack := func(seg, win uint32) []byte {
		m := make([]byte, mad.Size)
		(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeAck, Flags: mad.RMPPActive, SegmentNumber: seg, PayloadLength: win}).MarshalTo(m)
		return m
	}
	f.Add(uint16(5*216), append(append(ack(1, 3), ack(3, 5)...), ack(5, 5)...))
	f.Add(uint16(100), ack(1, 1))
	f.Add(uint16(3000), append(ack(1, 64), make([]byte, 10)...))
	f.Fuzz(func(t *testing.T, n uint16, in []byte) {
		msg := make([]byte, 40+int(n))
		(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeData, Flags: mad.RMPPActive}).MarshalTo(msg)
		s, err := NewRMPPSender(msg, 40)
		if err != nil {
			t.Fatal(err)
		}
		check := func(segs [][]byte) {
			for _, m := range segs {
				var h mad.RMPPHeader
				h.UnmarshalBinary(m)
				if h.SegmentNumber < 1 || int(h.SegmentNumber) > s.Segments() || h.SegmentNumber > s.winLast {
					t.Fatalf("sent segment %d of %d, window to %d", h.SegmentNumber, s.Segments(), s.winLast)
				}
			}
		}
		check(s.Start())
		for len(in) > 0 && !s.Done() {
			k := min(len(in), mad.Size)
			var segs [][]byte
			var err error
			if k < mad.RMPPDataStart {
				segs, err = s.Timeout()
			} else {
				segs, err = s.Handle(in[:k])
			}
			in = in[k:]
			var re *RMPPError
			if err != nil && !errors.As(err, &re) {
				t.Fatalf("error %T: %v", err, err)
			}
			if err != nil {
				return
			}
			check(segs)
		}
		if s.Done() && int(s.lastAck) != s.Segments() {
			t.Fatalf("done with %d of %d segments acknowledged", s.lastAck, s.Segments())
		}
	})
}
