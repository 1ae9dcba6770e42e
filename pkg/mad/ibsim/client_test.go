package ibsim

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func dialFake(t *testing.T, f *fakeSim) *Client {
	t.Helper()
	c, err := Dial(context.Background(), f.config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestDialReadsAttachPoint(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	want := capturedAttach(t, "Hca1")
	want.ClientID = 0
	if diff := cmp.Diff(want, c.Info()); diff != "" {
		t.Errorf("unexpected attach info (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(mad.LocalPort{Device: "ibsim0", Port: 1}, c.LocalPort()); diff != "" {
		t.Errorf("unexpected local port (-want +got):\n%s", diff)
	}
}

func TestDialRefused(t *testing.T) {
	f := newFakeSim(t)
	f.refuse.Store(true)
	if _, err := Dial(context.Background(), f.config()); !errors.Is(err, ErrRefused) {
		t.Fatalf("Dial = %v, want ErrRefused", err)
	}
	f.refuse.Store(false)
	dialFake(t, f) // the refused client's socket names were released
}

func TestDialTimeout(t *testing.T) {
	f := newFakeSim(t)
	f.mute.Store(true)
	start := time.Now()
	_, err := Dial(context.Background(), f.config())
	if err == nil {
		t.Fatal("Dial to a silent ibsim succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Dial gave up after %v, want about 300ms", d)
	}
}

func TestDialContextCancelled(t *testing.T) {
	f := newFakeSim(t)
	f.mute.Store(true)
	cfg := f.config()
	cfg.Timeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Dial(ctx, cfg); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial = %v, want DeadlineExceeded", err)
	}
}

func TestDialHostTooLong(t *testing.T) {
	cfg := Config{Host: "a-node-id-longer-than-thirty-one-bytes"}
	if _, err := Dial(context.Background(), cfg); err == nil {
		t.Fatal("Dial with a 38-byte SIM_HOST succeeded")
	}
}

func TestSendFrame(t *testing.T) {
	tests := []struct {
		name     string
		class    mad.Class
		addr     mad.Address
		wantSLID rdma.LID
		wantSQP  uint32
	}{
		{"DR SMP", mad.ClassSMIDirect, mad.Address{LID: rdma.PermissiveLID}, rdma.PermissiveLID, 0},
		{"LID-routed SMP", mad.ClassSMI, mad.Address{LID: 7}, 0, 0},
		{"PerfMgt GMP", mad.ClassPerf, mad.Address{LID: 7, QPN: 1, QKey: mad.QP1QKey}, 0, 1},
	}
	f := newFakeSim(t)
	c := dialFake(t, f)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := drNodeInfo(uint64(i), 0)
			p.MAD[1] = byte(tt.class)
			p.Addr = tt.addr
			got := query(t, c, p)
			r := f.lastFrame()
			want := request{DLID: tt.addr.LID, SLID: tt.wantSLID, DQP: tt.addr.QPN, SQP: tt.wantSQP, Length: mad.Size}
			copy(want.MAD[:], p.MAD)
			if diff := cmp.Diff(want, r); diff != "" {
				t.Errorf("unexpected frame at ibsim (-want +got):\n%s", diff)
			}
			wantAddr := mad.Address{LID: tt.addr.LID, QPN: tt.addr.QPN}
			if diff := cmp.Diff(wantAddr, got.Addr); diff != "" {
				t.Errorf("unexpected reply address (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSendShortMADPadded(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	p := drNodeInfo(5, 0)
	p.MAD = p.MAD[:mad.SMPDataOffset]
	got := query(t, c, p)
	if r := f.lastFrame(); r.Length != mad.SMPDataOffset {
		t.Errorf("length %d, want %d", r.Length, mad.SMPDataOffset)
	}
	if len(got.MAD) != mad.Size {
		t.Errorf("reply MAD of %d bytes, want %d", len(got.MAD), mad.Size)
	}
}

func TestSendRejects(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	mutate := map[string]func(b []byte){
		"base version 2":    func(b []byte) { b[0] = 2 },
		"class version 3":   func(b []byte) { b[2] = 3 },
		"hop pointer 1":     func(b []byte) { b[6] = 1 },
		"D bit on a Get":    func(b []byte) { b[4] |= 0x80 },
		"DrSLID not 0xffff": func(b []byte) { b[32], b[33] = 0, 1 },
	}
	for name, m := range mutate {
		p := drNodeInfo(1, 0)
		m(p.MAD)
		if err := c.Send(context.Background(), p); err == nil {
			t.Errorf("%s: Send succeeded", name)
		}
	}
	for _, n := range []int{0, mad.HeaderLen - 1, mad.Size + 1} {
		if err := c.Send(context.Background(), &mad.Packet{MAD: make([]byte, n)}); err == nil {
			t.Errorf("Send of %d bytes succeeded", n)
		}
	}
}

func TestRecvSkipsRunts(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	p := drNodeInfo(9, 0)
	p.MAD[16], p.MAD[17] = 0xde, 0xad
	r := query(t, c, p)
	if uint32(mustHeader(t, r.MAD).TID) != 9 {
		t.Errorf("got TID %#x, want the echo of 9 after the runt", mustHeader(t, r.MAD).TID)
	}
}

func TestRecvContext(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var p mad.Packet
	if err := c.Recv(ctx, &p); !errors.Is(err, context.Canceled) {
		t.Fatalf("Recv(cancelled) = %v, want Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := c.Recv(ctx, &p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv(timeout) = %v, want DeadlineExceeded", err)
	}
	query(t, c, drNodeInfo(3, 0)) // no stale deadline left behind
}

func TestCloseOnceUnblocksRecv(t *testing.T) {
	f := newFakeSim(t)
	c, err := Dial(context.Background(), f.config())
	if err != nil {
		t.Fatal(err)
	}
	recvErr := make(chan error, 1)
	go func() {
		var p mad.Packet
		recvErr <- c.Recv(context.Background(), &p)
	}()
	time.Sleep(20 * time.Millisecond)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-recvErr:
		if !errors.Is(err, mad.ErrClosed) {
			t.Errorf("Recv = %v, want ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Recv still blocked after Close")
	}
	if n := f.disconnects.Load(); n != 1 {
		t.Errorf("%d DISCONNECTs, want 1", n)
	}
	var p mad.Packet
	if err := c.Recv(context.Background(), &p); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
	if err := c.Send(context.Background(), drNodeInfo(1, 0)); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

func TestCloseReportsSilentIBSim(t *testing.T) {
	f := newFakeSim(t)
	c, err := Dial(context.Background(), f.config())
	if err != nil {
		t.Fatal(err)
	}
	f.mute.Store(true)
	err = c.Close()
	if err == nil {
		t.Fatal("Close with no DISCONNECT answer succeeded")
	}
	if again := c.Close(); again != err {
		t.Errorf("second Close = %v, want the first result %v", again, err)
	}
}

func TestManyClientsOneProcess(t *testing.T) {
	f := newFakeSim(t)
	var clients []*Client
	for range 4 {
		clients = append(clients, dialFake(t, f))
	}
	for i, c := range clients {
		if c.Info().ClientID != i {
			t.Errorf("client %d got number %d", i, c.Info().ClientID)
		}
		r := query(t, c, drNodeInfo(uint64(100+i), 0))
		if tid := mustHeader(t, r.MAD).TID; tid != uint64(100+i) {
			t.Errorf("client %d got TID %d", i, tid)
		}
		if r.Status != 0 {
			t.Errorf("client %d: status %v", i, r.Status)
		}
	}
}

// TestRecvBatch has more frames queued than one read takes, a runt among
// them: each comes out once, in order, the runt skipped, and the sends
// went over the connected socket.
func TestRecvBatch(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	if !c.connected {
		t.Error("the data socket was not connected to ibsim's")
	}
	const n = 2*batchFrames + 5
	for tid := uint64(1); tid <= n; tid++ {
		p := drNodeInfo(tid, 0)
		if tid == 7 {
			p.MAD[16], p.MAD[17] = 0xde, 0xad // answered with a runt first
		}
		if err := c.Send(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	// Let every answer queue up first.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		f.mu.Lock()
		echoed := len(f.frames)
		f.mu.Unlock()
		if echoed == n || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for tid := uint64(1); tid <= n; tid++ {
		var p mad.Packet
		if err := c.Recv(ctx, &p); err != nil {
			t.Fatalf("frame %d: %v", tid, err)
		}
		if got := mustHeader(t, p.MAD).TID; got != tid {
			t.Fatalf("frame %d has TID %d", tid, got)
		}
		if tid == 1 && c.batch.n != batchFrames {
			t.Errorf("the first read took %d frames, want %d", c.batch.n, batchFrames)
		}
	}
}

// TestSendConcurrent sends from many goroutines at once: every frame
// reaches ibsim once, and each goroutine's frames in the order it sent
// them.
func TestSendConcurrent(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	const senders, each = 8, 60
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := c.Send(context.Background(), drNodeInfo(uint64(g*1000+i), 0)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Read while they send: the sockets hold only so many frames.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	defer wg.Wait()
	next := make([]int, senders)
	for range senders * each {
		var p mad.Packet
		if err := c.Recv(ctx, &p); err != nil {
			t.Fatalf("after %v frames: %v", next, err)
		}
		tid := int(mustHeader(t, p.MAD).TID)
		g, i := tid/1000, tid%1000
		if g >= senders || i != next[g] {
			t.Fatalf("TID %d: sender %d's frame %d, want its frame %d", tid, g, i, next[min(g, senders-1)])
		}
		next[g]++
	}
}

// TestSendFailsAfterSocketError: once a send finds ibsim's socket gone,
// that Send and every later one fail.
func TestSendFailsAfterSocketError(t *testing.T) {
	f := newFakeSim(t)
	c := dialFake(t, f)
	query(t, c, drNodeInfo(1, 0))
	f.mu.Lock()
	f.outs[0].Close()
	f.mu.Unlock()
	if err := c.Send(context.Background(), drNodeInfo(2, 0)); err == nil {
		t.Fatal("Send to a closed ibsim socket succeeded")
	}
	if err := c.Send(context.Background(), drNodeInfo(3, 0)); err == nil || !strings.Contains(err.Error(), "data socket") {
		t.Fatalf("the next Send: %v, want the socket's error", err)
	}
}

// The attach point's four requests go at once; the one ibsim refuses is
// the one the error names, and the slot CONNECT took is given back.
func TestDialAttachRequestRefused(t *testing.T) {
	tests := []struct {
		typ  ctlType
		want string
	}{
		{ctlGetVendor, ctlGetVendor.String()},
		{ctlGetNodeInfo, ctlGetNodeInfo.String()},
		{ctlGetPortInfo, ctlGetPortInfo.String()},
		{ctlGetPKeys, ctlGetPKeys.String()},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			f := newFakeSim(t)
			f.refuseType.Store(int32(tt.typ))
			_, err := Dial(context.Background(), f.config())
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("Dial = %v, want ErrRefused", err)
			}
			if !strings.Contains(err.Error(), tt.want+": ") {
				t.Errorf("Dial = %v, want it to name %s", err, tt.want)
			}
			if got := f.disconnects.Load(); got != 1 {
				t.Errorf("%d DISCONNECTs after the failed attach, want 1", got)
			}
		})
	}
}
