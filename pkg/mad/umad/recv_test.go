package umad

import (
	"context"
	"errors"
	"math"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"golang.org/x/sys/unix"
)

func TestRecv(t *testing.T) {
	littleEndian(t)
	gid := rdma.GID{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x23, 0x45}
	resp := testMAD(mad.ClassSA, 2)
	resp[3] = byte(mad.MethodGetResp)
	long := append(testMAD(mad.ClassSA, 2), make([]byte, 344)...)
	long[len(long)-1] = 0xee
	const gmpHdr = `02000000 00000000 00000000 00000000 40010000
		00000001 80010000 0007 05 02 01 00 3f 10
		fe800000000000000002c90300012345 000abcde 0100 000000000000`
	tests := []struct {
		name  string
		reads []fakeRead
		want  mad.Packet
	}{
		{
			name:  "GMP with GRH",
			reads: []fakeRead{{frame: frame(t, gmpHdr, resp)}},
			want: mad.Packet{MAD: resp, Addr: mad.Address{LID: 7, QPN: 1, QKey: mad.QP1QKey, SL: 5, PathBits: 2, PKeyIndex: 1,
				HasGRH: true, GRH: mad.GRH{GID: gid, HopLimit: 0x3f, TrafficClass: 0x10, FlowLabel: 0xabcde}}},
		},
		{
			name: "SMP without GRH",
			reads: []fakeRead{{frame: frame(t, `00000000 00000000 00000000 00000000 40010000
				00000000 00000000 ffff 00 00 00 07 08 09
				fe800000000000000002c90300012345 000abcde 0000 000000000000`, resp)}},
			want: mad.Packet{MAD: resp, Addr: mad.Address{LID: rdma.PermissiveLID}},
		},
		{
			name: "timed-out request",
			reads: []fakeRead{{frame: frame(t, `05000000 6e000000 e8030000 00000000 40010000
				00000001 80010000 0012 00 00 00 00 00 00
				00000000000000000000000000000000 00000000 0000 000000000000`, resp[:mad.HeaderLen])}},
			want: mad.Packet{MAD: resp[:mad.HeaderLen], Status: syscall.ETIMEDOUT, Addr: mad.Address{LID: 0x12, QPN: 1, QKey: mad.QP1QKey}},
		},
		{
			name: "RMPP message longer than the buffer",
			reads: []fakeRead{{frame: frame(t, `00000000 00000000 00000000 00000000 98020000
				00000001 00000000 0001 00 00 00 00 00 00
				00000000000000000000000000000000 00000000 0000 000000000000`, long)}},
			want: mad.Packet{MAD: long, Addr: mad.Address{LID: 1, QPN: 1}},
		},
		{
			name:  "short frame skipped",
			reads: []fakeRead{{frame: make([]byte, 10)}, {frame: frame(t, gmpHdr, resp)}},
			want: mad.Packet{MAD: resp, Addr: mad.Address{LID: 7, QPN: 1, QKey: mad.QP1QKey, SL: 5, PathBits: 2, PKeyIndex: 1,
				HasGRH: true, GRH: mad.GRH{GID: gid, HopLimit: 0x3f, TrafficClass: 0x10, FlowLabel: 0xabcde}}},
		},
		{
			name:  "interrupted read",
			reads: []fakeRead{{err: syscall.EINTR}, {frame: frame(t, gmpHdr, resp[:100])}},
			want: mad.Packet{MAD: resp[:100], Addr: mad.Address{LID: 7, QPN: 1, QKey: mad.QP1QKey, SL: 5, PathBits: 2, PKeyIndex: 1,
				HasGRH: true, GRH: mad.GRH{GID: gid, HopLimit: 0x3f, TrafficClass: 0x10, FlowLabel: 0xabcde}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSys()
			p := openFake(t, f, Options{})
			f.queue(tt.reads...)
			got := mad.Packet{MAD: make([]byte, 0, 1024), Timeout: time.Second, Status: syscall.EIO}
			store := &got.MAD[:1][0]
			if err := p.Recv(context.Background(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("packet (-want +got):\n%s", diff)
			}
			if &got.MAD[0] != store {
				t.Errorf("Recv did not reuse the MAD's storage")
			}
		})
	}
}

func TestRecvErrors(t *testing.T) {
	good := frame(t, `00000000 00000000 00000000 00000000 40010000
		00000001 00000000 0001 00 00 00 00 00 00
		00000000000000000000000000000000 00000000 0000 000000000000`, testMAD(mad.ClassSA, 2))
	// withLength is good with a longer MAD, its length field set to n.
	withLength := func(n uint32) []byte {
		b := append(append([]byte(nil), good...), make([]byte, 400)...)
		hostOrder.PutUint32(b[offLength:], n)
		return b
	}
	tests := []struct {
		name    string
		setup   func(*fakeSys)
		reads   []fakeRead
		wantErr string
		wantIs  []error
	}{
		{name: "read EIO", reads: []fakeRead{{err: syscall.EIO}},
			wantErr: "read /dev/infiniband/umad0: input/output error", wantIs: []error{syscall.EIO}},
		{name: "read EBADF", reads: []fakeRead{{err: syscall.EBADF}},
			wantErr: "read /dev/infiniband/umad0: bad file descriptor", wantIs: []error{syscall.EBADF}},
		{name: "read EINVAL", reads: []fakeRead{{err: syscall.EINVAL}},
			wantErr: "read /dev/infiniband/umad0: invalid argument", wantIs: []error{syscall.EINVAL}},
		{name: "ENOSPC without a larger length", reads: []fakeRead{{frame: withLength(100)}},
			wantErr: "read /dev/infiniband/umad0: no space left on device: the kernel asks for a 100-byte buffer",
			wantIs:  []error{syscall.ENOSPC}},
		{name: "ENOSPC with a huge length", reads: []fakeRead{{frame: withLength(math.MaxUint32)}},
			wantErr: "read /dev/infiniband/umad0: no space left on device: the kernel asks for a 4294967295-byte buffer",
			wantIs:  []error{syscall.ENOSPC}},
		{name: "ENOSPC twice", reads: []fakeRead{{frame: withLength(400)}},
			wantErr: "read /dev/infiniband/umad0: no space left on device", wantIs: []error{syscall.ENOSPC}},
		{name: "poll EINVAL", setup: func(f *fakeSys) { f.pollErr = syscall.EINVAL },
			wantErr: "poll /dev/infiniband/umad0: invalid argument", wantIs: []error{syscall.EINVAL}},
		{name: "device gone", setup: func(f *fakeSys) { f.revents = unix.POLLERR },
			wantErr: "poll /dev/infiniband/umad0: input/output error (the device reports an error: was it removed?)",
			wantIs:  []error{syscall.EIO}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSys()
			p := openFake(t, f, Options{})
			if tt.setup != nil {
				tt.setup(f)
			}
			f.queue(tt.reads...)
			err := p.Recv(context.Background(), &mad.Packet{})
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error:\n got %v\nwant %s", err, tt.wantErr)
			}
			for _, target := range tt.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
		})
	}
}

func TestRecvInterruptedPoll(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{})
	f.pollIntr = 2
	m := testMAD(mad.ClassSA, 2)
	f.queue(fakeRead{err: syscall.EAGAIN}, fakeRead{frame: append(make([]byte, HeaderLen), m...)})
	var got mad.Packet
	if err := p.Recv(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, got.MAD); diff != "" {
		t.Errorf("MAD (-want +got):\n%s", diff)
	}
	if n := f.pollCount(); n != 3 {
		t.Errorf("%d polls, want 3", n)
	}
}

func TestRecvContext(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Recv(ctx, &mad.Packet{}); err != context.Canceled {
		t.Errorf("Recv with a cancelled context: %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Recv(ctx, &mad.Packet{}) }()
	waitFor(t, "Recv to poll", func() bool { return f.pollCount() > 0 })
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("Recv cancelled while waiting: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("cancelling did not end Recv")
	}

	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := p.Recv(ctx, &mad.Packet{}); err != context.DeadlineExceeded {
		t.Errorf("Recv past its deadline: %v", err)
	}

	// The port still works after cancelled Recvs.
	m := testMAD(mad.ClassSA, 2)
	f.queue(fakeRead{frame: append(make([]byte, HeaderLen), m...)})
	var got mad.Packet
	if err := p.Recv(context.Background(), &got); err != nil || !cmp.Equal(m, got.MAD) {
		t.Errorf("Recv after cancellations: %v, MAD equal: %v", err, cmp.Equal(m, got.MAD))
	}
}

func TestCloseUnblocksRecv(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{Agents: []Agent{{Class: mad.ClassSMI, ClassVersion: 1}}})
	done := make(chan error)
	go func() { done <- p.Recv(context.Background(), &mad.Packet{}) }()
	waitFor(t, "Recv to poll", func() bool { return f.pollCount() > 0 })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, mad.ErrClosed) || err.Error() != "/dev/infiniband/umad0: transport closed" {
			t.Errorf("Recv ended by Close: %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Close did not end Recv")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := p.Recv(context.Background(), &mad.Packet{}); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if err := p.Send(context.Background(), &mad.Packet{MAD: testMAD(mad.ClassSMI, 1)}); !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Send after Close: %v", err)
	}
	if diff := cmp.Diff([]int{fakeUmadFD, fakeEventFD}, f.closed); diff != "" {
		t.Errorf("closed descriptors (-want +got):\n%s", diff)
	}
	if n := len(f.writes); n != 0 {
		t.Errorf("%d frames written after Close", n)
	}
}

func TestCloseErrors(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{Agents: []Agent{{Class: mad.ClassSMI, ClassVersion: 1}}})
	f.unregErr, f.closeErr = syscall.EINVAL, syscall.EIO
	want := "unregistering MAD agent 0: ioctl IB_USER_MAD_UNREGISTER_AGENT /dev/infiniband/umad0: invalid argument\n" +
		"close /dev/infiniband/umad0: input/output error\n" +
		"close eventfd for /dev/infiniband/umad0: input/output error"
	for i := range 2 {
		err := p.Close()
		if err == nil || err.Error() != want || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Close #%d:\n got %v\nwant %s", i+1, err, want)
		}
	}
}

// TestConcurrent runs Sends on several goroutines against a Recv loop and
// a Close, for the race detector.
func TestConcurrent(t *testing.T) {
	f := newFakeSys()
	p := openFake(t, f, Options{})
	recvd := make(chan error)
	go func() {
		var pkt mad.Packet
		for {
			if err := p.Recv(context.Background(), &pkt); err != nil {
				recvd <- err
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			class := []mad.Class{mad.ClassSMI, mad.ClassSMIDirect, mad.ClassPerf, mad.ClassSA}[g]
			for range 50 {
				m := testMAD(class, 1)
				if err := p.Send(context.Background(), &mad.Packet{MAD: m}); err != nil {
					t.Error(err)
					return
				}
				f.queue(fakeRead{frame: append(make([]byte, HeaderLen), m...)})
			}
		})
	}
	wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-recvd; !errors.Is(err, mad.ErrClosed) {
		t.Errorf("Recv loop ended with %v", err)
	}
	if n := len(f.writes); n != 200 {
		t.Errorf("%d frames written, want 200", n)
	}
}
