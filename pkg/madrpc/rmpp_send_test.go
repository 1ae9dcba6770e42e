package madrpc_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// vendorMessage is a vendor range 2 response of n data bytes: the 40
// header bytes (the RMPP Active flag set) and the data.
func vendorMessage(n int) []byte {
	m := make([]byte, 40+n)
	m[0], m[1], m[2], m[3] = 1, 0x33, 1, 0x81
	(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeData, Flags: mad.RMPPActive}).MarshalTo(m)
	for i := range n {
		m[40+i] = byte(i*7 + i>>8)
	}
	return m
}

func rmppMAD(h mad.RMPPHeader) []byte {
	m := make([]byte, mad.Size)
	m[0], m[1], m[2], m[3] = 1, 0x33, 1, 0x01
	if h.Version == 0 {
		h.Version = 1
	}
	h.Flags |= mad.RMPPActive
	h.MarshalTo(m)
	return m
}

func ackMAD(seg, win uint32) []byte {
	return rmppMAD(mad.RMPPHeader{Type: mad.RMPPTypeAck, SegmentNumber: seg, PayloadLength: win})
}

// segNumbers returns the segment numbers of DATA segments.
func segNumbers(segs [][]byte) []uint32 {
	var out []uint32
	for _, m := range segs {
		var h mad.RMPPHeader
		h.UnmarshalBinary(m)
		out = append(out, h.SegmentNumber)
	}
	return out
}

func TestRMPPSender(t *testing.T) {
	type step struct {
		ack     []byte // nil: a timeout
		want    []uint32
		wantErr uint8 // the status of the RMPPError, 0 for none
		done    bool
	}
	tests := []struct {
		name  string
		data  int // bytes of data: 216 a segment
		steps []step
	}{
		{"one segment", 100, []step{{ack: ackMAD(1, 1), done: true}}},
		{"empty", 0, []step{{ack: ackMAD(1, 1), done: true}}},
		{"windows", 5 * 216, []step{
			{ack: ackMAD(1, 3), want: []uint32{2, 3}},
			{ack: ackMAD(3, 10), want: []uint32{4, 5}},
			{ack: ackMAD(5, 5), done: true},
		}},
		{"a window past the end", 3*216 - 1, []step{
			{ack: ackMAD(1, 64), want: []uint32{2, 3}},
			{ack: ackMAD(3, 3), done: true},
		}},
		{"resend after a timeout", 4 * 216, []step{
			{ack: ackMAD(1, 4), want: []uint32{2, 3, 4}},
			{ack: ackMAD(2, 4)},
			{want: []uint32{3, 4}},
			{ack: ackMAD(4, 4), done: true},
		}},
		{"an old ACK", 4 * 216, []step{
			{ack: ackMAD(1, 2), want: []uint32{2}},
			{ack: ackMAD(2, 4), want: []uint32{3, 4}},
			{ack: ackMAD(1, 2)},
			{ack: ackMAD(4, 4), done: true},
		}},
		{"an ACK of a segment not sent", 4 * 216, []step{{ack: ackMAD(3, 4), wantErr: mad.RMPPStatusSegTooBig}}},
		{"a window before its segment", 4 * 216, []step{{ack: ackMAD(1, 0), wantErr: mad.RMPPStatusWindowSmall}}},
		{"a bad version", 4 * 216, []step{{ack: rmppMAD(mad.RMPPHeader{Version: 2, Type: mad.RMPPTypeAck, SegmentNumber: 1, PayloadLength: 1}), wantErr: mad.RMPPStatusBadVersion}}},
		{"a bad type", 4 * 216, []step{{ack: rmppMAD(mad.RMPPHeader{Type: 9}), wantErr: mad.RMPPStatusBadType}}},
		{"short", 4 * 216, []step{{ack: make([]byte, 30), wantErr: mad.RMPPStatusUnspecified}}},
		{"the receiver stops", 4 * 216, []step{{ack: rmppMAD(mad.RMPPHeader{Type: mad.RMPPTypeStop, Status: mad.RMPPStatusResources}), wantErr: mad.RMPPStatusResources, done: true}}},
		{"too many resends", 2 * 216, append(func() []step {
			var s []step
			for range 10 {
				s = append(s, step{want: []uint32{1}})
			}
			return s
		}(), step{wantErr: mad.RMPPStatusRetries, done: true})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := madrpc.NewRMPPSender(vendorMessage(tt.data), 40)
			if err != nil {
				t.Fatal(err)
			}
			if got := segNumbers(s.Start()); !cmp.Equal(got, []uint32{1}) {
				t.Fatalf("Start sent %v, want [1]", got)
			}
			for i, st := range tt.steps {
				var segs [][]byte
				if st.ack == nil {
					segs, err = s.Timeout()
				} else {
					segs, err = s.Handle(st.ack)
				}
				var re *madrpc.RMPPError
				switch {
				case st.wantErr == 0 && err != nil:
					t.Fatalf("step %d: %v", i, err)
				case st.wantErr != 0 && (!errors.As(err, &re) || re.Status != st.wantErr):
					t.Fatalf("step %d: error %v, want RMPP status %d", i, err, st.wantErr)
				}
				if diff := cmp.Diff(st.want, segNumbers(segs)); diff != "" {
					t.Errorf("step %d: segments sent (-want +got):\n%s", i, diff)
				}
				if s.Done() != st.done {
					t.Errorf("step %d: Done %v, want %v", i, s.Done(), st.done)
				}
			}
		})
	}
}

func TestNewRMPPSenderRejects(t *testing.T) {
	for _, tc := range []struct {
		msg    []byte
		hdrLen int
	}{{make([]byte, 20), 40}, {make([]byte, 60), 30}, {make([]byte, 300), 256}} {
		if _, err := madrpc.NewRMPPSender(tc.msg, tc.hdrLen); err == nil {
			t.Errorf("NewRMPPSender(%d bytes, %d) accepted", len(tc.msg), tc.hdrLen)
		}
	}
}

// TestRMPPSenderLossy runs a sender against the Transactor's receiver
// logic through mad.RMPPSegments' inverse: segments and ACKs are lost at
// random, the sender's timeouts recover, and the message arrives whole.
func TestRMPPSenderLossy(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		msg := vendorMessage(rng.IntN(40 * 216))
		s, err := madrpc.NewRMPPSender(msg, 40)
		if err != nil {
			t.Fatal(err)
		}
		r := madrpc.NewRMPPTestReceiver(40, 4)
		inflight := s.Start()
		for rounds := 0; !s.Done(); rounds++ {
			if rounds > 1000 {
				t.Fatalf("seed %d: no progress after %d rounds", seed, rounds)
			}
			var acks [][]byte
			for _, m := range inflight {
				if rng.IntN(5) == 0 {
					continue // the segment is lost
				}
				if ack := r.Add(m); ack != nil && rng.IntN(5) != 0 {
					acks = append(acks, ack)
				}
			}
			inflight = nil
			for _, a := range acks {
				segs, err := s.Handle(a)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				inflight = append(inflight, segs...)
			}
			if len(inflight) == 0 && !s.Done() {
				if inflight, err = s.Timeout(); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		}
		if got := r.Message(); !bytes.Equal(got[40:], msg[40:]) {
			t.Fatalf("seed %d: %d bytes arrived, want %d equal to the sent", seed, len(got)-40, len(msg)-40)
		}
	}
}

// collector is a Transport whose Send keeps the packets for the test.
type collector struct{ out []mad.Packet }

func (c *collector) Send(_ context.Context, p *mad.Packet) error {
	c.out = append(c.out, mad.Packet{MAD: append([]byte(nil), p.MAD...), Addr: p.Addr})
	return nil
}
func (c *collector) Recv(ctx context.Context, p *mad.Packet) error { <-ctx.Done(); return ctx.Err() }
func (c *collector) LocalPort() mad.LocalPort                      { return mad.LocalPort{Device: "collector", Port: 1} }
func (c *collector) Close() error                                  { return nil }

func (c *collector) take() []mad.Packet {
	out := c.out
	c.out = nil
	return out
}

// TestRMPPSendsToTransactor has a server's RMPPSends answer a Transactor's
// vendor Get with a 3,000-byte message, one segment lost once: the
// Transactor reassembles it, the ACKs drive the sender, and the transfer
// ends.
func TestRMPPSendsToTransactor(t *testing.T) {
	srv := &collector{}
	sends := madrpc.NewRMPPSends(srv, time.Second)
	want := vendorMessage(3000)[40:]
	dropped := false
	tr := madtest.New(func(req *mad.Packet) []mad.Packet {
		if taken, err := sends.Take(context.Background(), req); taken {
			if err != nil {
				t.Errorf("Take: %v", err)
			}
		} else {
			msg := append(append([]byte(nil), req.MAD[:40]...), want...)
			msg[3] = byte(mad.MethodGetResp)
			(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeData, Flags: mad.RMPPActive}).MarshalTo(msg)
			if err := sends.Send(context.Background(), msg, 40, req.Addr); err != nil {
				t.Fatal(err)
			}
		}
		var out []mad.Packet
		for _, p := range srv.take() {
			var h mad.RMPPHeader
			h.UnmarshalBinary(p.MAD)
			if h.SegmentNumber == 5 && !dropped {
				dropped = true // lost once: the Transactor resends the request under a new TID, a new transfer starts
				continue
			}
			out = append(out, p)
		}
		return out
	})
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: 200 * time.Millisecond, Retries: 3})
	defer x.Close()
	r, err := x.Do(context.Background(), &madrpc.Request{Path: mad.LIDPath(4), Class: 0x33, Method: mad.MethodGet, AttrID: 3, OUI: 0x1405, Name: "cpu", Data: make([]byte, 216)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Data(), want) {
		t.Fatalf("got %d bytes, want the %d sent", len(r.Data()), len(want))
	}
	// The first try's transfer, under the TID the Transactor gave up,
	// is left to the sender's timer: it ends after its resends, with an
	// ABORT no one waits for.
	if sends.Len() != 1 {
		t.Fatalf("%d transfers under way, want the first try's", sends.Len())
	}
	var errs []error
	for i := 1; i <= 20 && sends.Len() > 0; i++ {
		errs = append(errs, sends.Expire(context.Background(), time.Now().Add(time.Duration(i)*time.Hour))...)
	}
	var re *madrpc.RMPPError
	if sends.Len() != 0 || len(errs) != 1 || !errors.As(errs[0], &re) || re.Type != mad.RMPPTypeAbort {
		t.Errorf("%d transfers still under way, errors %v; want the first try's ended with an ABORT", sends.Len(), errs)
	}
}

// TestRMPPSendsExpire checks the resend timer: an unacknowledged window
// goes again at its deadline, and after the resends run out the transfer
// ends with an ABORT.
func TestRMPPSendsExpire(t *testing.T) {
	srv := &collector{}
	sends := madrpc.NewRMPPSends(srv, 100*time.Millisecond)
	msg := vendorMessage(5 * 216)
	msg[3] = byte(mad.MethodGetResp)
	addr := mad.Address{LID: 7, QPN: 1}
	if err := sends.Send(context.Background(), msg, 40, addr); err != nil {
		t.Fatal(err)
	}
	if got := segNumbers(packetsMAD(srv.take())); !cmp.Equal(got, []uint32{1}) {
		t.Fatalf("sent %v first, want [1]", got)
	}
	if errs := sends.Expire(context.Background(), time.Now()); len(errs) != 0 || len(srv.take()) != 0 {
		t.Fatalf("Expire before the deadline: %v", errs)
	}
	now := time.Now()
	for i := range 10 {
		now = now.Add(time.Second)
		if errs := sends.Expire(context.Background(), now); len(errs) != 0 {
			t.Fatalf("resend %d: %v", i+1, errs)
		}
		if got := segNumbers(packetsMAD(srv.take())); !cmp.Equal(got, []uint32{1}) {
			t.Fatalf("resend %d sent %v, want [1]", i+1, got)
		}
	}
	errs := sends.Expire(context.Background(), now.Add(time.Second))
	var re *madrpc.RMPPError
	if len(errs) != 1 || !errors.As(errs[0], &re) || re.Status != mad.RMPPStatusRetries {
		t.Fatalf("after the resends: %v, want an RMPP retries error", errs)
	}
	out := srv.take()
	var h mad.RMPPHeader
	if len(out) != 1 || h.UnmarshalBinary(out[0].MAD) != nil || h.Type != mad.RMPPTypeAbort || h.Status != mad.RMPPStatusRetries || out[0].Addr != addr {
		t.Fatalf("sent %v, want one ABORT to %v", out, addr)
	}
	if _, ok := sends.Next(); ok || sends.Len() != 0 {
		t.Errorf("a transfer is left after the abort")
	}
	// An ACK for the ended transfer is not the sender's any more.
	if taken, _ := sends.Take(context.Background(), &mad.Packet{MAD: ackMAD(1, 2), Addr: addr}); taken {
		t.Errorf("Take took an ACK of an ended transfer")
	}
}

func packetsMAD(ps []mad.Packet) [][]byte {
	var out [][]byte
	for _, p := range ps {
		out = append(out, p.MAD)
	}
	return out
}
