package madrpc_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

var nodeInfo = madrpc.Request{Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: 0x0011, Name: "NodeInfo"}

func request(p mad.Path) *madrpc.Request {
	r := nodeInfo
	r.Path = p
	return &r
}

func answer(req *mad.Packet) []mad.Packet {
	return []mad.Packet{madtest.Reply(req, mad.StatusOK, mad.SMPDataOffset, []byte{1, 1, 2, 3})}
}

func TestTransactorDR(t *testing.T) {
	var sent mad.Packet
	tr := madtest.New(func(req *mad.Packet) []mad.Packet { sent = *req; return answer(req) })
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{})
	defer x.Close()
	resp, err := x.Do(context.Background(), request(mad.DRPath(0, 1, 3)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte{1, 1, 2, 3}, resp.Data()[:4]); diff != "" {
		t.Errorf("unexpected data (-want +got):\n%s", diff)
	}
	var h mad.Header
	h.UnmarshalBinary(sent.MAD)
	var d mad.DRSMPHeader
	d.UnmarshalBinary(sent.MAD)
	got := struct {
		Class        mad.Class
		Method       mad.Method
		Attr         mad.AttrID
		Hops         uint8
		SLID, DLID   rdma.LID
		Path         []byte
		AddrLID      rdma.LID
		QPN, Timeout uint32
	}{h.MgmtClass, h.Method, h.AttrID, d.HopCount, d.DrSLID, d.DrDLID, d.InitialPath[:4], sent.Addr.LID, sent.Addr.QPN, uint32(sent.Timeout / time.Millisecond)}
	want := got
	want.Class, want.Method, want.Attr, want.Hops = mad.ClassSMIDirect, mad.MethodGet, 0x11, 2
	want.SLID, want.DLID, want.Path = 0xffff, 0xffff, []byte{0, 1, 3, 0}
	want.AddrLID, want.QPN, want.Timeout = rdma.PermissiveLID, 0, 1000
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected request (-want +got):\n%s", diff)
	}
}

func TestTransactorLIDAndGMP(t *testing.T) {
	var sent []mad.Packet
	tr := madtest.New(func(req *mad.Packet) []mad.Packet { sent = append(sent, *req); return answer(req) })
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{})
	defer x.Close()
	if _, err := x.Do(context.Background(), request(mad.LIDPath(12))); err != nil {
		t.Fatal(err)
	}
	pc := &madrpc.Request{Path: mad.LIDPath(12), Class: mad.ClassPerf, Method: mad.MethodGet, AttrID: 0x12, Name: "PortCounters", Data: []byte{0, 1}}
	if _, err := x.Do(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	got := []mad.Address{sent[0].Addr, sent[1].Addr}
	want := []mad.Address{{LID: 12, QPN: 0}, {LID: 12, QPN: 1, QKey: mad.QP1QKey}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected addresses (-want +got):\n%s", diff)
	}
	if sent[0].MAD[1] != byte(mad.ClassSMI) || sent[1].MAD[mad.SMPDataOffset+1] != 1 {
		t.Errorf("class %#x, PMA data %v", sent[0].MAD[1], sent[1].MAD[64:66])
	}
}

// TestTransactorRetries: a try that times out is sent again, up to the
// retries; a request the transport returns undelivered goes again within
// its try, a quarter of the timeout later, up to three times, so that a
// burst of drops does not spend every try at once.
func TestTransactorRetries(t *testing.T) {
	const timeout = 100 * time.Millisecond
	tests := []struct {
		name       string
		handler    func(n int, req *mad.Packet) []mad.Packet
		retries    int
		wantTries  int
		wantSends  [2]int // at least, at most
		minElapsed time.Duration
		wantErr    string
	}{
		{"answered at once", func(n int, req *mad.Packet) []mad.Packet { return answer(req) }, 2, 1, [2]int{1, 1}, 0, ""},
		{"dropped twice then answered", func(n int, req *mad.Packet) []mad.Packet {
			if n < 3 {
				return []mad.Packet{madtest.Dropped(req)}
			}
			return answer(req)
		}, 2, 1, [2]int{3, 3}, timeout / 2, ""},
		{"dropped four times then answered", func(n int, req *mad.Packet) []mad.Packet {
			if n < 5 {
				return []mad.Packet{madtest.Dropped(req)}
			}
			return answer(req)
		}, 2, 2, [2]int{5, 5}, timeout, ""},
		{"silent then answered", func(n int, req *mad.Packet) []mad.Packet {
			if n == 1 {
				return nil
			}
			return answer(req)
		}, 1, 2, [2]int{2, 2}, timeout, ""},
		{"never answered", func(n int, req *mad.Packet) []mad.Packet { return nil }, 2, 3, [2]int{3, 3}, 3 * timeout,
			"SubnGet(NodeInfo) to Lid 12: no response after 3 tries"},
		{"always dropped", func(n int, req *mad.Packet) []mad.Packet { return []mad.Packet{madtest.Dropped(req)} }, 3, 4, [2]int{4, 16}, 4 * timeout,
			"SubnGet(NodeInfo) to Lid 12: no response after 4 tries"},
		{"no retries", func(n int, req *mad.Packet) []mad.Packet { return nil }, -1, 1, [2]int{1, 1}, timeout,
			"SubnGet(NodeInfo) to Lid 12: no response after 1 try"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			tr := madtest.New(func(req *mad.Packet) []mad.Packet { n++; return tt.handler(n, req) })
			x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Timeout: timeout, Retries: tt.retries})
			defer x.Close()
			start := time.Now()
			resp, err := x.Do(context.Background(), request(mad.LIDPath(12)))
			elapsed := time.Since(start)
			if sends := tr.Sends(); sends < tt.wantSends[0] || sends > tt.wantSends[1] {
				t.Errorf("sent %d times, want %d to %d", sends, tt.wantSends[0], tt.wantSends[1])
			}
			if elapsed < tt.minElapsed || elapsed > tt.minElapsed+time.Second {
				t.Errorf("took %v, want %v or a little more", elapsed, tt.minElapsed)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Tries != tt.wantTries || resp.Sent != tr.Sends() {
					t.Errorf("tries %d, sent %d; want %d, %d", resp.Tries, resp.Sent, tt.wantTries, tr.Sends())
				}
				return
			}
			var te *madrpc.TimeoutError
			if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), tt.wantErr) || te.Tries != tt.wantTries {
				t.Errorf("error %v, want a TimeoutError %q after %d tries", err, tt.wantErr, tt.wantTries)
			}
		})
	}
}

func TestTransactorBadReplies(t *testing.T) {
	tests := []struct {
		name    string
		reply   func(req *mad.Packet) []mad.Packet
		wantErr string
	}{
		{"status", func(req *mad.Packet) []mad.Packet {
			return []mad.Packet{madtest.Reply(req, mad.StatusInvalidField, 64, nil)}
		}, "SubnGet(NodeInfo) to DR path slid 65535; dlid 65535; 0: MAD status 0x001c: invalid attribute or modifier value"},
		{"short", func(req *mad.Packet) []mad.Packet {
			p := madtest.Reply(req, 0, 64, nil)
			p.MAD = p.MAD[:100]
			return []mad.Packet{p}
		}, "bad response: 100 bytes, want 256"},
		{"other attribute", func(req *mad.Packet) []mad.Packet {
			p := madtest.Reply(req, 0, 64, nil)
			binary.BigEndian.PutUint16(p.MAD[16:], 0x15)
			return []mad.Packet{p}
		}, "bad response: attribute 0x0015, want 0x0011"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := madrpc.NewTransactor(madtest.New(tt.reply), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond})
			defer x.Close()
			_, err := x.Do(context.Background(), request(mad.DRPath(0)))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestTransactorConcurrent routes replies delivered in reverse order to
// their requests by TID, with the window bounding the requests in flight.
func TestTransactorConcurrent(t *testing.T) {
	var mu sync.Mutex
	var held []*mad.Packet
	inFlight, maxInFlight := 0, 0
	tr := madtest.New(func(req *mad.Packet) []mad.Packet {
		mu.Lock()
		defer mu.Unlock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		held = append(held, req)
		if len(held) < 4 {
			return nil
		}
		var out []mad.Packet
		for i := len(held) - 1; i >= 0; i-- {
			// Each reply carries the LID its request went to as data.
			out = append(out, madtest.Reply(held[i], 0, 64, []byte{byte(held[i].Addr.LID)}))
		}
		inFlight -= len(held)
		held = nil
		return out
	})
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{Window: 4, Timeout: 5 * time.Second})
	defer x.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := x.Do(context.Background(), request(mad.LIDPath(rdma.LID(i+1))))
			if err != nil {
				errs <- err
				return
			}
			if resp.Data()[0] != byte(i+1) {
				errs <- errors.New("reply routed to the wrong request")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if maxInFlight > 4 {
		t.Errorf("%d requests in flight, window 4", maxInFlight)
	}
}

func TestTransactorCancelAndClose(t *testing.T) {
	x := madrpc.NewTransactor(madtest.New(func(*mad.Packet) []mad.Packet { return nil }), madrpc.TransactorOptions{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := x.Do(ctx, request(mad.LIDPath(1))); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's", err)
	}
	done := make(chan error)
	go func() {
		_, err := x.Do(context.Background(), request(mad.LIDPath(1)))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	x.Close()
	select {
	case err := <-done:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("error %v, want one wrapping ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Do still waiting after Close")
	}
}

func TestRequestValidation(t *testing.T) {
	tests := []struct {
		r       madrpc.Request
		wantErr string
	}{
		{madrpc.Request{Path: mad.LIDPath(0), Class: mad.ClassSMI, AttrID: 0x11}, "LID 0 is not a unicast LID"},
		{madrpc.Request{Path: mad.LIDPath(0xc000), Class: mad.ClassSMI, AttrID: 0x11}, "not a unicast LID"},
		{madrpc.Request{Path: mad.DRPath(1, 2), Class: mad.ClassSMI, AttrID: 0x11}, "does not start at 0"},
		{madrpc.Request{Path: mad.DRPath(make([]uint8, 65)...), Class: mad.ClassSMI, AttrID: 0x11}, "64 hops: at most 63"},
		{madrpc.Request{Path: mad.LIDPath(1), Class: mad.ClassSMIDirect, AttrID: 0x11}, "needs a DR path"},
		{madrpc.Request{Path: mad.LIDPath(1), Class: mad.ClassPerf, Data: make([]byte, 193)}, "room for 192"},
		{madrpc.Request{Path: mad.Path{LID: 3, DR: []uint8{0, 1}}, Class: mad.ClassSMI, AttrID: 0x11}, "a combined route needs unicast LIDs"},
		{madrpc.Request{Path: mad.Path{LID: 0xc001, DR: []uint8{0, 1}, DrSLID: 2}, Class: mad.ClassSMI, AttrID: 0x11}, "a combined route needs unicast LIDs"},
	}
	x := madrpc.NewTransactor(madtest.New(answer), madrpc.TransactorOptions{})
	defer x.Close()
	for _, tt := range tests {
		if _, err := x.Do(context.Background(), &tt.r); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%v: error %v, want %q", tt.r.Path, err, tt.wantErr)
		}
	}
}

func TestPathString(t *testing.T) {
	tests := []struct {
		p    mad.Path
		want string
	}{
		{mad.LIDPath(12), "Lid 12"},
		{mad.DRPath(0), "DR path slid 65535; dlid 65535; 0"},
		{mad.DRPath(0, 1, 3), "DR path slid 65535; dlid 65535; 0,1,3"},
		{mad.Path{LID: 3, DR: []uint8{0, 1}, DrSLID: 2}, "Lid 3 DR path slid 2; dlid 65535; 0,1"},
		{mad.Path{DGID: &testGID}, "GID fe80::2:c903:0:1492"},
		{mad.Path{LID: 4, DGID: &testGID}, "Lid 4 GID fe80::2:c903:0:1492"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// TestCombinedRoute checks a DR SMP with a LID-routed part goes to the LID
// with the DR header's DrSLID set to ours, as libibmad sends it.
func TestCombinedRoute(t *testing.T) {
	var sent []byte
	var addr mad.Address
	h := func(req *mad.Packet) []mad.Packet {
		sent = append([]byte(nil), req.MAD...)
		addr = req.Addr
		return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, nil)}
	}
	x := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{})
	defer x.Close()
	p := mad.Path{LID: 3, DR: []uint8{0, 5}, DrSLID: 2}
	if _, err := x.Do(context.Background(), &madrpc.Request{Path: p, Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: 0x11}); err != nil {
		t.Fatal(err)
	}
	if addr.LID != 3 || sent[1] != byte(mad.ClassSMIDirect) || sent[7] != 1 {
		t.Errorf("sent to LID %d, class %#x, hop count %d; want LID 3, DR class, 1 hop", addr.LID, sent[1], sent[7])
	}
	if slid, dlid := binary.BigEndian.Uint16(sent[32:]), binary.BigEndian.Uint16(sent[34:]); slid != 2 || dlid != 0xffff {
		t.Errorf("DrSLID %d DrDLID %#x, want 2 and 0xffff", slid, dlid)
	}
	if sent[128] != 0 || sent[129] != 5 {
		t.Errorf("initial path % x, want 00 05", sent[128:130])
	}
}

var testGID = rdma.NewGID(0xfe80000000000000, 0x0002c90300001492)

// TestGlobalRoute checks a GID-routed GMP goes out with a GRH and LID 0
// (RoCE), and that a DR SMP refuses one.
func TestGlobalRoute(t *testing.T) {
	var addr mad.Address
	h := func(req *mad.Packet) []mad.Packet {
		addr = req.Addr
		return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, nil)}
	}
	x := madrpc.NewTransactor(madtest.New(h), madrpc.TransactorOptions{})
	defer x.Close()
	p := mad.Path{DGID: &testGID, SGIDIndex: 1}
	if _, err := x.Do(context.Background(), &madrpc.Request{Path: p, Class: mad.ClassPerf, Method: mad.MethodGet, AttrID: 0x12}); err != nil {
		t.Fatal(err)
	}
	want := mad.Address{QPN: 1, QKey: mad.QP1QKey, HasGRH: true, GRH: mad.GRH{GID: testGID, GIDIndex: 1, HopLimit: 64}}
	if diff := cmp.Diff(want, addr); diff != "" {
		t.Errorf("address (-want +got):\n%s", diff)
	}
	dr := mad.Path{DR: []uint8{0}, DGID: &testGID}
	if _, err := x.Do(context.Background(), &madrpc.Request{Path: dr, Class: mad.ClassSMI, AttrID: 0x11}); err == nil || !strings.Contains(err.Error(), "a directed route has no global route") {
		t.Errorf("DR with a GID: %v", err)
	}
}
