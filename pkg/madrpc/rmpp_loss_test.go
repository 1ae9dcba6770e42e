package madrpc_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// lossTimeout is the try's timeout of the loss tests: ACKs and windows go
// again after a quarter of it (50ms), a bounced ACK after a fortieth (5ms).
const lossTimeout = 200 * time.Millisecond

// slack is how much longer than its timers a run may take on a loaded
// machine.
const slack = 400 * time.Millisecond

// lossCase is one lossy RMPP exchange: a GetTable answered with 100
// segments, or a GetMulti of 3 segments answered with 2.
type lossCase struct {
	name     string
	getMulti bool
	filter   func(seg uint32, resends int, p mad.Packet) []mad.Packet
	incoming func(h mad.RMPPHeader, seen int, p *mad.Packet) madtest.Fate
	resend   time.Duration // the responder's window timer; zero for none
	total    time.Duration // TransactorOptions.RMPPTotal; zero for the default
	// What must come of it: the tries, and the time taken at least (at
	// most that plus slack). wantErr, if set, is the error's prefix.
	wantTries  int
	minElapsed time.Duration
	maxElapsed time.Duration
	wantErr    string
	check      func(t *testing.T, resp *madtest.RMPPResponder, tr *madtest.Transport)
}

// lossRecords is the GetTable's answer: 20,000 bytes in 100 segments.
var lossRecords = records(250, 80)

// run runs c and checks the answer came whole, or the error c wants.
func (c lossCase) run(t *testing.T) {
	t.Helper()
	var gotReq []byte
	resp := &madtest.RMPPResponder{HdrLen: 56, Filter: c.filter, Incoming: c.incoming, Resend: c.resend, Respond: func(req *mad.Packet) []byte {
		gotReq = append([]byte(nil), req.MAD[56:]...)
		if c.getMulti {
			m := madtest.SAResponse(req, mad.StatusOK, 64, records(5, 64)...)
			binary.BigEndian.PutUint16(m[16:], uint16(mad.AttrPathRecord))
			return m
		}
		return madtest.SAResponse(req, mad.StatusOK, 80, lossRecords...)
	}}
	tr := madtest.New(resp.Handle)
	resp.Deliver = tr.Deliver
	defer resp.Stop()
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{SA: &madrpc.SAAddress{SMLID: 1}, Timeout: lossTimeout, Retries: 2, RMPPTotal: c.total})
	defer x.Close()
	start := time.Now()
	var got *madrpc.Response
	var err error
	want := bytes.Join(lossRecords, nil)
	multi := bytes.Repeat([]byte{1, 2, 3, 4, 5}, 100) // 500 bytes: 3 segments
	if c.getMulti {
		want = bytes.Join(records(5, 64), nil)
		var res *madrpc.SAResult
		res, err = x.QuerySA(context.Background(), &madrpc.SAQuery{Method: mad.MethodGetMulti, AttrID: mad.AttrMultiPathRecord, Name: "MultiPathRecord", Record: multi})
		if res != nil {
			got = res.Response
		}
	} else {
		r := getTable
		got, err = x.Do(context.Background(), &r)
	}
	elapsed := time.Since(start)
	if elapsed < c.minElapsed || elapsed > c.maxElapsed+slack {
		t.Errorf("took %v, want %v to %v", elapsed, c.minElapsed, c.maxElapsed)
	}
	if c.check != nil {
		c.check(t, resp, tr)
	}
	if c.wantErr != "" {
		if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
			t.Fatalf("error %v, want %q", err, c.wantErr)
		}
		var te *madrpc.TimeoutError
		if errors.As(err, &te) && te.Tries != c.wantTries {
			t.Errorf("%d tries, want %d", te.Tries, c.wantTries)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Data()[:len(want)], want) {
		t.Errorf("data differs from what was sent")
	}
	if c.getMulti && !bytes.Equal(gotReq[:len(multi)], multi) {
		t.Errorf("the responder got a different request")
	}
	if got.Tries != c.wantTries {
		t.Errorf("%d tries, want %d", got.Tries, c.wantTries)
	}
}

// ackOf reports whether h is an ACK of segment seg.
func ackOf(h mad.RMPPHeader, seg uint32) bool {
	return h.Type == mad.RMPPTypeAck && h.SegmentNumber == seg
}

// acksTaken counts the ACKs the responder took.
func acksTaken(resp *madtest.RMPPResponder) int {
	n := 0
	for _, a := range resp.Acks() {
		if a.Type == mad.RMPPTypeAck {
			n++
		}
	}
	return n
}

// TestRMPPLoss: lost and bounced (returned undelivered, as ibsim does)
// ACKs, segments and requests are recovered within the try, by the
// receiver resending its ACK, the responder resending its window or the
// request going again; a try ends, and the request starts over, only
// when nothing moves the transfer on for the timeout; a dead responder
// or path fails after the tries in the time they promise.
func TestRMPPLoss(t *testing.T) {
	trickle := time.Now()
	tests := []lossCase{
		{
			// A sender that moves the transfer on well within every
			// timeout, a segment each 20ms: 100 segments would take 2 s,
			// the total time is 300ms. The receiver aborts, as the
			// kernel does after its 40 s, and the request fails.
			name: "slow sender past the total time", total: 300 * time.Millisecond, resend: 10 * time.Millisecond,
			minElapsed: 300 * time.Millisecond, maxElapsed: 300 * time.Millisecond,
			wantErr: "SubnAdmGetTable(NodeRecord) to Lid 1: RMPP transfer aborted, status 118 (total time too long): segment ",
			filter: func(seg uint32, _ int, p mad.Packet) []mad.Packet {
				if seg == 1 {
					trickle = time.Now()
				}
				if time.Since(trickle) < time.Duration(seg-1)*20*time.Millisecond {
					return nil
				}
				return []mad.Packet{p}
			},
			check: func(t *testing.T, resp *madtest.RMPPResponder, _ *madtest.Transport) {
				aborts := 0
				for _, a := range resp.Acks() {
					if a.Type == mad.RMPPTypeAbort && a.Status == mad.RMPPStatusTimeTooLong {
						aborts++
					}
				}
				if aborts != 1 {
					t.Errorf("the responder got %d ABORTs with status 118, want 1", aborts)
				}
			},
		},
		{
			name: "first ACK bounced", wantTries: 1, maxElapsed: lossTimeout / 4,
			incoming: func(h mad.RMPPHeader, seen int, _ *mad.Packet) madtest.Fate {
				if ackOf(h, 1) && seen == 0 {
					return madtest.Bounce
				}
				return madtest.Take
			},
			check: func(t *testing.T, resp *madtest.RMPPResponder, _ *madtest.Transport) {
				// ACKs of 1, 33, 65, 97 and 100, the first sent twice.
				if resp.Bounced() != 1 || acksTaken(resp) != 5 {
					t.Errorf("%d bounced, %d ACKs taken; want 1, 5", resp.Bounced(), acksTaken(resp))
				}
			},
		},
		{
			name: "first ACK lost", wantTries: 1, minElapsed: lossTimeout / 4, maxElapsed: lossTimeout / 2,
			incoming: func(h mad.RMPPHeader, seen int, _ *mad.Packet) madtest.Fate {
				if ackOf(h, 1) && seen == 0 {
					return madtest.Lose // the receiver's timer sends it again
				}
				return madtest.Take
			},
		},
		{
			name: "every ACK bounced twice", wantTries: 1, maxElapsed: lossTimeout / 2,
			incoming: func(h mad.RMPPHeader, seen int, _ *mad.Packet) madtest.Fate {
				if h.Type == mad.RMPPTypeAck && seen < 2 {
					return madtest.Bounce
				}
				return madtest.Take
			},
			check: func(t *testing.T, resp *madtest.RMPPResponder, _ *madtest.Transport) {
				if resp.Bounced() < 4 {
					t.Errorf("%d ACKs bounced, want at least 4", resp.Bounced())
				}
			},
		},
		{
			name: "segment lost, the responder resends", wantTries: 1, resend: lossTimeout / 8, maxElapsed: lossTimeout / 2,
			filter: func(seg uint32, resends int, p mad.Packet) []mad.Packet {
				if seg == 5 && resends == 0 {
					return nil
				}
				return []mad.Packet{p}
			},
			check: func(t *testing.T, resp *madtest.RMPPResponder, _ *madtest.Transport) {
				// Segments 6-65 came past the gap and were kept: the
				// ACK of the gap filled moves the window past them,
				// and the window resent draws one ACK, not sixty.
				if n := resp.SegmentSends(5); n != 2 {
					t.Errorf("segment 5 sent %d times, want 2", n)
				}
				if n := acksTaken(resp); n > 9 {
					t.Errorf("%d ACKs, want at most 9", n)
				}
			},
		},
		{
			name: "segment lost, the responder never resends", wantTries: 2, minElapsed: lossTimeout, maxElapsed: 2 * lossTimeout,
			filter: func(seg uint32, resends int, p mad.Packet) []mad.Packet {
				if seg == 5 && resends == 0 {
					return nil
				}
				return []mad.Packet{p}
			},
		},
		{
			name: "request bounced", wantTries: 1, minElapsed: lossTimeout / 4, maxElapsed: lossTimeout / 2,
			incoming: func(h mad.RMPPHeader, seen int, _ *mad.Packet) madtest.Fate {
				if h.Type == 0 && seen == 0 {
					return madtest.Bounce // goes again a quarter timeout later
				}
				return madtest.Take
			},
		},
		{
			name: "responder dead", wantTries: 3, minElapsed: 3 * lossTimeout, maxElapsed: 3 * lossTimeout,
			wantErr:  "SubnAdmGetTable(NodeRecord) to Lid 1: no response after 3 tries",
			incoming: func(mad.RMPPHeader, int, *mad.Packet) madtest.Fate { return madtest.Lose },
		},
		{
			name: "path dead: every MAD bounced", wantTries: 3, minElapsed: 3 * lossTimeout, maxElapsed: 3 * lossTimeout,
			wantErr:  "SubnAdmGetTable(NodeRecord) to Lid 1: no response after 3 tries",
			incoming: func(mad.RMPPHeader, int, *mad.Packet) madtest.Fate { return madtest.Bounce },
			check: func(t *testing.T, _ *madtest.RMPPResponder, tr *madtest.Transport) {
				if n := tr.Sends(); n < 3 || n > 12 {
					t.Errorf("%d sends, want 3 to 12: four a try at most", n)
				}
			},
		},
		{
			name: "no ACK ever gets through", wantTries: 3, minElapsed: 3 * lossTimeout, maxElapsed: 3 * lossTimeout,
			wantErr: "SubnAdmGetTable(NodeRecord) to Lid 1: no response after 3 tries",
			incoming: func(h mad.RMPPHeader, _ int, _ *mad.Packet) madtest.Fate {
				if h.Type == mad.RMPPTypeAck {
					return madtest.Bounce
				}
				return madtest.Take
			},
			check: func(t *testing.T, resp *madtest.RMPPResponder, _ *madtest.Transport) {
				// Each try: the ACK, then at most 10 resends.
				if n := resp.Bounced(); n < 3 || n > 33 {
					t.Errorf("%d ACKs bounced, want 3 to 33", n)
				}
			},
		},
		{
			name: "GetMulti: request segment 2 bounced", getMulti: true, wantTries: 1, minElapsed: lossTimeout / 4, maxElapsed: lossTimeout / 2,
			incoming: func(h mad.RMPPHeader, seen int, p *mad.Packet) madtest.Fate {
				if h.Type == mad.RMPPTypeData && h.SegmentNumber == 2 && seen == 0 {
					return madtest.Bounce // goes again with its window, a quarter timeout later
				}
				return madtest.Take
			},
		},
		{
			name: "GetMulti: first segment bounced", getMulti: true, wantTries: 1, minElapsed: lossTimeout / 4, maxElapsed: lossTimeout / 2,
			incoming: func(h mad.RMPPHeader, seen int, p *mad.Packet) madtest.Fate {
				if h.Type == mad.RMPPTypeData && h.SegmentNumber == 1 && seen == 0 {
					return madtest.Bounce
				}
				return madtest.Take
			},
		},
		{
			name: "GetMulti: responder dead", getMulti: true, wantTries: 3, minElapsed: 3 * lossTimeout, maxElapsed: 3 * lossTimeout,
			wantErr:  "SubnAdmGetMulti(MultiPathRecord) to Lid 1: no response after 3 tries",
			incoming: func(mad.RMPPHeader, int, *mad.Packet) madtest.Fate { return madtest.Lose },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t)
		})
	}
}
