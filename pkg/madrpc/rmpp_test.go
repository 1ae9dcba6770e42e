package madrpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// records returns n distinct records of recLen bytes.
func records(n, recLen int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = bytes.Repeat([]byte{byte(i), byte(i >> 8), 0xa5}, recLen/3+1)[:recLen]
	}
	return out
}

var getTable = madrpc.Request{Path: mad.LIDPath(1), Class: mad.ClassSA, Method: mad.MethodGetTable, AttrID: 0x0011, Name: "NodeRecord"}

// rmppRun sends getTable to a responder that answers with n records of
// recLen bytes, and returns the data received and the ACKs the responder
// saw.
func rmppRun(t *testing.T, n, recLen int, filter func(seg uint32, resends int, p mad.Packet) []mad.Packet) (*madrpc.Response, []mad.RMPPHeader, error) {
	t.Helper()
	resp := &madtest.RMPPResponder{HdrLen: 56, Filter: filter, Respond: func(req *mad.Packet) []byte {
		return madtest.SAResponse(req, mad.StatusOK, recLen, records(n, recLen)...)
	}}
	tr := madtest.New(resp.Handle)
	// The timeout is what a lost segment costs; a busy machine must not
	// reach it between segments that were sent (the tests count tries).
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: 400 * time.Millisecond, Retries: 2})
	defer x.Close()
	r := getTable
	got, err := x.Do(context.Background(), &r)
	return got, resp.Acks(), err
}

func TestRMPPReassembly(t *testing.T) {
	ack := func(seg, win uint32) mad.RMPPHeader {
		return mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeAck, RespTime: 14, Flags: mad.RMPPActive, SegmentNumber: seg, PayloadLength: win}
	}
	// 1000 NodeRecord-sized records: 112,000 bytes in 560 segments of 200,
	// acknowledged every half window.
	var bigAcks []mad.RMPPHeader
	for s := uint32(1); s < 560; s += 32 {
		bigAcks = append(bigAcks, ack(s, s+64))
	}
	bigAcks = append(bigAcks, ack(560, 560))
	tests := []struct {
		name      string
		n, recLen int
		wantAcks  []mad.RMPPHeader
	}{
		{"no records", 0, 112, []mad.RMPPHeader{ack(1, 1)}},
		{"one record", 1, 64, []mad.RMPPHeader{ack(1, 1)}},
		{"one full segment", 25, 8, []mad.RMPPHeader{ack(1, 1)}},
		{"two segments", 26, 8, []mad.RMPPHeader{ack(1, 65), ack(2, 2)}},
		{"560 segments", 1000, 112, bigAcks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, acks, err := rmppRun(t, tt.n, tt.recLen, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(bytes.Join(records(tt.n, tt.recLen), nil), got.Data(), cmpEmpty); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAcks, acks); diff != "" {
				t.Errorf("ACKs (-want +got):\n%s", diff)
			}
			if got.Tries != 1 {
				t.Errorf("%d tries, want 1", got.Tries)
			}
		})
	}
}

// cmpEmpty makes nil and empty slices equal.
var cmpEmpty = cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })

func TestRMPPRecovery(t *testing.T) {
	var held *mad.Packet
	tests := []struct {
		name      string
		filter    func(seg uint32, resends int, p mad.Packet) []mad.Packet
		wantTries int
	}{
		{"lost segment", func(seg uint32, resends int, p mad.Packet) []mad.Packet {
			if seg == 5 && resends == 0 {
				return nil
			}
			return []mad.Packet{p}
		}, 2},
		{"lost first segment", func(seg uint32, resends int, p mad.Packet) []mad.Packet {
			if seg == 1 && resends == 0 {
				return nil
			}
			return []mad.Packet{p}
		}, 2},
		{"lost last segment", func(seg uint32, resends int, p mad.Packet) []mad.Packet {
			if seg == 100 && resends == 0 {
				return nil
			}
			return []mad.Packet{p}
		}, 2},
		{"every segment twice", func(seg uint32, resends int, p mad.Packet) []mad.Packet {
			return []mad.Packet{p, p}
		}, 1},
		{"segments 3 and 4 swapped", func(seg uint32, resends int, p mad.Packet) []mad.Packet {
			switch {
			case resends > 0:
				return []mad.Packet{p}
			case seg == 3:
				held = &p
				return nil
			case seg == 4:
				return []mad.Packet{p, *held}
			}
			return []mad.Packet{p}
		}, 1}, // 4 is kept until 3 comes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := rmppRun(t, 250, 80, tt.filter) // 20,000 bytes: 100 segments
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(bytes.Join(records(250, 80), nil), got.Data()); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			if got.Tries != tt.wantTries {
				t.Errorf("%d tries, want %d", got.Tries, tt.wantTries)
			}
		})
	}
}

func TestRMPPFailures(t *testing.T) {
	// replace returns a filter that sends what edit makes of segment seg.
	replace := func(seg uint32, edit func(h *mad.RMPPHeader)) func(uint32, int, mad.Packet) []mad.Packet {
		return func(s uint32, _ int, p mad.Packet) []mad.Packet {
			if s == seg {
				var h mad.RMPPHeader
				h.UnmarshalBinary(p.MAD)
				edit(&h)
				h.MarshalTo(p.MAD)
			}
			return []mad.Packet{p}
		}
	}
	tests := []struct {
		name      string
		filter    func(uint32, int, mad.Packet) []mad.Packet
		wantErr   string
		wantAbort uint8 // the status of the ABORT ibtool sends; 0 for none
	}{
		{"sender aborts", replace(2, func(h *mad.RMPPHeader) { h.Type, h.Status = mad.RMPPTypeAbort, 118 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer the sender sent ABORT, status 118 (total time too long)", 0},
		{"sender stops", replace(3, func(h *mad.RMPPHeader) { h.Type, h.Status = mad.RMPPTypeStop, 1 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer the sender sent STOP, status 1 (resources exhausted)", 0},
		{"First on segment 2", replace(2, func(h *mad.RMPPHeader) { h.Flags |= mad.RMPPFirst }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 120 (inconsistent first and segment number): segment 2 with First true", 120},
		{"no First on segment 1", replace(1, func(h *mad.RMPPHeader) { h.Flags &^= mad.RMPPFirst }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 120 (inconsistent first and segment number): segment 1 with First false", 120},
		{"last payload too long", replace(100, func(h *mad.RMPPHeader) { h.PayloadLength = 221 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 119 (inconsistent last and payload length): last segment 100 with payload length 221", 119},
		{"last payload shorter than the SA header", replace(100, func(h *mad.RMPPHeader) { h.PayloadLength = 19 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 119 (inconsistent last and payload length): last segment 100 with payload length 19", 119},
		{"version 2", replace(1, func(h *mad.RMPPHeader) { h.Version = 2 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 125 (unsupported version): RMPP version 2", 125},
		{"bad type", replace(7, func(h *mad.RMPPHeader) { h.Type = 9 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 121 (bad RMPP type): RMPP type 9", 121},
		{"segment 0", replace(2, func(h *mad.RMPPHeader) { h.SegmentNumber = 0 }),
			"SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 120 (inconsistent first and segment number): segment number 0", 120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, acks, err := rmppRun(t, 250, 80, tt.filter)
			var re *madrpc.RMPPError
			if !errors.As(err, &re) {
				t.Fatalf("error %v (%T), want an *mad.RMPPError", err, err)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			var abort uint8
			for _, a := range acks {
				if a.Type == mad.RMPPTypeAbort {
					abort = a.Status
				}
			}
			if abort != tt.wantAbort {
				t.Errorf("ABORT sent with status %d, want %d (messages sent: %v)", abort, tt.wantAbort, acks)
			}
		})
	}
}

func TestRMPPTimeout(t *testing.T) {
	// Segments stop after the first window: the request times out after
	// every try, each one starting the transfer over.
	_, _, err := rmppRun(t, 250, 80, func(seg uint32, _ int, p mad.Packet) []mad.Packet {
		if seg > 70 {
			return nil
		}
		return []mad.Packet{p}
	})
	var te *madrpc.TimeoutError
	if !errors.As(err, &te) || te.Tries != 3 {
		t.Fatalf("error %v, want a timeout after 3 tries", err)
	}
}

func TestRMPPSegmentsRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 199, 200, 201, 400, 12345} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			msg := make([]byte, 56+n)
			for i := range msg {
				msg[i] = byte(i * 7)
			}
			segs := madrpc.RMPPSegments(msg, 56)
			if want := max(1, (n+199)/200); len(segs) != want {
				t.Fatalf("%d segments, want %d", len(segs), want)
			}
			var data []byte
			for i, s := range segs {
				var h mad.RMPPHeader
				h.UnmarshalBinary(s)
				if h.SegmentNumber != uint32(i+1) || (i == 0) != (h.Flags&mad.RMPPFirst != 0) || (i == len(segs)-1) != (h.Flags&mad.RMPPLast != 0) {
					t.Errorf("segment %d: header %+v", i+1, h)
				}
				data = append(data, s[56:]...)
			}
			var last mad.RMPPHeader
			last.UnmarshalBinary(segs[len(segs)-1])
			pad := 220 - int(last.PayloadLength)
			if diff := cmp.Diff(msg[56:], data[:len(data)-pad], cmpEmpty); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRMPPReceiverOrder feeds the receiver the segments of a 10-segment
// message in the orders loss and resends make, with windows of 4: a
// duplicate draws the ACK of where the receiver is, a segment past a gap
// is kept while the window takes it, and the one that fills the gap is
// acknowledged at once.
func TestRMPPReceiverOrder(t *testing.T) {
	msg := make([]byte, 56+2000) // 10 segments of 200
	for i := range msg {
		msg[i] = byte(i * 13)
	}
	(&mad.RMPPHeader{Version: 1, Type: mad.RMPPTypeData, Flags: mad.RMPPActive}).MarshalTo(msg)
	segs := madrpc.RMPPSegments(msg, 56)
	type ack struct{ seg, win uint32 }
	tests := []struct {
		name  string
		order []uint32
		want  []*ack // the ACK each segment draws, nil for none
	}{
		{"in order", []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			[]*ack{{1, 5}, nil, {3, 7}, nil, {5, 9}, nil, {7, 11}, nil, {9, 13}, {10, 10}}},
		{"2 lost, resent after 3 and 4", []uint32{1, 3, 4, 2, 5, 6, 7, 8, 9, 10},
			[]*ack{{1, 5}, nil, nil, {4, 8}, nil, {6, 10}, nil, {8, 12}, nil, {10, 10}}},
		{"past the window: dropped, sent again", []uint32{1, 3, 6, 2, 4, 5, 6, 7, 8, 9, 10},
			[]*ack{{1, 5}, nil, nil, {3, 7}, nil, {5, 9}, nil, {7, 11}, nil, {9, 13}, {10, 10}}},
		{"duplicates", []uint32{1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 3},
			[]*ack{{1, 5}, {1, 5}, nil, {2, 5}, {3, 7}, nil, {5, 9}, nil, {7, 11}, nil, {9, 13}, {10, 10}, {10, 10}, {10, 10}}},
		{"window resent from the last ACK", []uint32{1, 2, 3, 4, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			[]*ack{{1, 5}, nil, {3, 7}, nil, {4, 7}, {4, 7}, {4, 7}, {5, 9}, nil, {7, 11}, nil, {9, 13}, {10, 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := madrpc.NewRMPPTestReceiver(56, 4)
			var got []*ack
			for _, n := range tt.order {
				a := r.Add(segs[n-1])
				if a == nil {
					got = append(got, nil)
					continue
				}
				var h mad.RMPPHeader
				h.UnmarshalBinary(a)
				got = append(got, &ack{h.SegmentNumber, h.PayloadLength})
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(ack{})); diff != "" {
				t.Errorf("ACKs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(msg[56:], r.Message()[56:]); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRMPPResendNewTID: each try of a request answered in RMPP segments
// goes under a TID of its own, so segments of a transfer the responder
// still sends from an earlier try cannot be taken into the new one, nor
// the new one's ACKs given to the old.
func TestRMPPResendNewTID(t *testing.T) {
	var mu sync.Mutex
	var tids []uint64
	resp := &madtest.RMPPResponder{HdrLen: 56, Filter: func(seg uint32, _ int, p mad.Packet) []mad.Packet {
		if seg > 70 {
			return nil
		}
		return []mad.Packet{p}
	}, Respond: func(req *mad.Packet) []byte {
		mu.Lock()
		tids = append(tids, madtest.TID(req))
		mu.Unlock()
		return madtest.SAResponse(req, mad.StatusOK, 80, records(250, 80)...)
	}}
	tr := madtest.New(resp.Handle)
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: 200 * time.Millisecond, Retries: 2})
	defer x.Close()
	r := getTable
	_, err := x.Do(context.Background(), &r)
	var te *madrpc.TimeoutError
	if !errors.As(err, &te) || te.Tries != 3 {
		t.Fatalf("error %v, want a timeout after 3 tries", err)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[uint64]bool{}
	for _, tid := range tids {
		seen[tid] = true
	}
	if len(tids) != 3 || len(seen) != 3 {
		t.Errorf("request TIDs %#x, want 3 different ones", tids)
	}
}
