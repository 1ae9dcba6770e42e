package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestRpingFlags(t *testing.T) {
	old := rpingLookup
	t.Cleanup(func() { rpingLookup = old })
	rpingLookup = func(_ context.Context, host string) (netip.Addr, error) {
		if host == "host1" {
			return netip.MustParseAddr("192.0.2.7"), nil
		}
		return netip.Addr{}, fmt.Errorf("no such host")
	}
	tests := []struct {
		args  []string
		want  rpingOptions
		usage string // a usage error containing this
	}{
		{args: []string{"-s"}, want: rpingOptions{Server: true, Port: 7174, Size: 64,
			dst: netip.MustParseAddrPort("0.0.0.0:7174")}},
		{args: []string{"-c", "-a", "192.0.2.1", "-C", "3", "-v", "-V", "-S", "100", "-p", "7000", "-I", "192.0.2.2"},
			want: rpingOptions{Client: true, Addr: "192.0.2.1", Source: "192.0.2.2", Port: 7000, Count: 3, Size: 100, Verbose: true, Validate: true,
				dst: netip.MustParseAddrPort("192.0.2.1:7000"), src: netip.MustParseAddrPort("192.0.2.2:0")}},
		{args: []string{"-s", "-a", "::0", "-P", "-q", "-d"}, want: rpingOptions{Server: true, Addr: "::0", Port: 7174, Size: 64,
			Persistent: true, SelfQP: true, Debug: true, dst: netip.MustParseAddrPort("[::]:7174")}},
		{args: []string{"-c", "-a", "host1"}, want: rpingOptions{Client: true, Addr: "host1", Port: 7174, Size: 64,
			dst: netip.MustParseAddrPort("192.0.2.7:7174")}},
		{args: []string{}, usage: "-s (server) or -c (client) is required"},
		{args: []string{"-s", "-c"}, usage: "not both"},
		{args: []string{"-c"}, usage: "the client needs the server's address (-a)"},
		{args: []string{"-c", "-a", "x", "-P"}, usage: "-P is for the server"},
		{args: []string{"-s", "-S", "25"}, usage: "Invalid size 25 (valid range is 26 to 65536)"},
		{args: []string{"-s", "-S", "65536"}, usage: "Invalid size 65536"},
		{args: []string{"-s", "-C", "-1"}, usage: "Invalid count -1"},
		{args: []string{"-s", "-p", "70000"}, usage: "invalid -p port 70000"},
		{args: []string{"-s", "-p", "x"}, usage: "invalid -p port \"x\""},
		{args: []string{"-c", "-a", "nosuchhost"}, usage: "getaddrinfo failed for -a nosuchhost"},
		{args: []string{"-s", "extra"}, usage: "extra"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := cmdutil.NewTestFactory(nil)
			var got *rpingOptions
			c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "rping", New: func(f *cmdutil.Factory) *cobra.Command {
				return newRpingCmd(f, func(o *rpingOptions) error { got = o; return nil })
			}})
			c.SetArgs(tt.args)
			err := c.Execute()
			if tt.usage != "" {
				var u *cmdutil.UsageError
				if !errors.As(err, &u) || !strings.Contains(err.Error(), tt.usage) {
					t.Fatalf("got %v, want a usage error with %q", err, tt.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.IO, got.ctx, got.resolve, got.args = cmdutil.IOStreams{}, nil, nil, tt.want.args
			if diff := cmp.Diff(&tt.want, got, cmp.AllowUnexported(rpingOptions{}), cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b }),
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".args" }, cmp.Ignore())); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRpingFill: the ping data is rping's, byte for byte (an rdmacm-utils
// rping -v client's first and 59th lines at the default -S 64).
func TestRpingFill(t *testing.T) {
	for _, c := range []struct {
		ping int
		want string
	}{
		{0, "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr"},
		{58, "rdma-ping-58: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopq"},
		{57, "rdma-ping-57: zABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnop"},
	} {
		b := make([]byte, 64)
		rpingFill(b, c.ping)
		if b[63] != 0 {
			t.Errorf("ping %d: the last byte is %#x, want NUL", c.ping, b[63])
		}
		if diff := cmp.Diff(c.want, string(cString(b))); diff != "" {
			t.Errorf("ping %d: unexpected data (-want +got):\n%s", c.ping, diff)
		}
	}
}

func TestRpingInfo(t *testing.T) {
	m := rpingInfo{Addr: 0x7f0012345678, RKey: 0x1234, Size: 64}
	b, _ := m.MarshalBinary()
	if diff := cmp.Diff([]byte{0, 0, 0x7f, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 0x12, 0x34, 0, 0, 0, 64}, b); diff != "" {
		t.Errorf("unexpected wire bytes (-want +got):\n%s", diff)
	}
	got, err := parseRpingInfo(b)
	if err != nil || got != m {
		t.Errorf("got %+v, %v", got, err)
	}
	if _, err := parseRpingInfo(b[:12]); err == nil || err.Error() != "Received bogus data, size 12" {
		t.Errorf("12 bytes: got %v", err)
	}
}

// memLink is one side of an in-memory rping connection: messages go
// through channels, RDMA READ and WRITE copy between the sides' buffers
// (address 1 is a side's start buffer, 2 its rdma buffer).
type memLink struct {
	startB, rdmaB []byte
	inbox         chan rpingInfo
	peer          *memLink
	// corrupt flips a byte of what the server writes back.
	corrupt bool
	// sent counts the messages sent; stopAfter > 0 makes the side stop
	// (its peer's context ends, disconnected) after that many.
	sent, stopAfter int
	peerGone        context.CancelCauseFunc
	// flush makes a side that stops flush its peer's receive before the
	// peer hears that it disconnected, as Soft-iWARP does.
	flush   bool
	flushed chan struct{}
}

func memPair(size int) (client, server *memLink) {
	client = &memLink{startB: make([]byte, size), rdmaB: make([]byte, size), inbox: make(chan rpingInfo, 4), flushed: make(chan struct{})}
	server = &memLink{rdmaB: make([]byte, size), inbox: make(chan rpingInfo, 4), flushed: make(chan struct{})}
	client.peer, server.peer = server, client
	return client, server
}

func (l *memLink) start() []byte { return l.startB }
func (l *memLink) rdma() []byte  { return l.rdmaB }

func (l *memLink) region(addr uint64) []byte {
	if addr == 1 {
		return l.startB
	}
	return l.rdmaB
}

func (l *memLink) send(buf rpingBuf) error {
	m := rpingInfo{}
	switch buf {
	case rpingStart:
		m = rpingInfo{Addr: 1, RKey: 1, Size: uint32(len(l.startB))}
	case rpingSink:
		m = rpingInfo{Addr: 2, RKey: 2, Size: uint32(len(l.rdmaB))}
	}
	l.sent++
	if l.stopAfter > 0 && l.sent > l.stopAfter {
		if l.flush {
			close(l.peer.flushed)
			time.AfterFunc(50*time.Millisecond, func() { l.peerGone(errRpingDisconnected) })
		} else {
			l.peerGone(errRpingDisconnected)
		}
		return nil
	}
	l.peer.inbox <- m
	return nil
}

func (l *memLink) recv(ctx context.Context) (rpingInfo, error) {
	select {
	case m := <-l.inbox:
		return m, nil
	case <-l.flushed:
		return rpingInfo{}, fmt.Errorf("cq completion failed status 5: %w",
			&verbs.CompletionError{Object: "siw0 CQ 3", WC: verbs.WorkCompletion{ID: 1, Status: verbs.WCWRFlushErr, Opcode: verbs.WCRecv}})
	case <-ctx.Done():
		return rpingInfo{}, ctx.Err()
	}
}

func (l *memLink) read(_ context.Context, from rpingInfo) error {
	copy(l.rdmaB, l.peer.region(from.Addr)[:from.Size])
	return nil
}

func (l *memLink) write(_ context.Context, to rpingInfo, n int) error {
	dst := l.peer.region(to.Addr)
	copy(dst, l.rdmaB[:n])
	if l.corrupt {
		dst[20] ^= 1
	}
	return nil
}

// runPair runs rping's client and server loops against each other.
func runPair(t *testing.T, client, server *memLink, count int, validate bool) (cliOut, srvOut string, cliErr, srvErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cctx, cgone := context.WithCancelCause(ctx)
	sctx, sgone := context.WithCancelCause(ctx)
	client.peerGone, server.peerGone = sgone, cgone
	var cb, sb strings.Builder
	sdone, cdone := make(chan error), make(chan error)
	go func() {
		err := rpingServer(sctx, server, true, &sb)
		cgone(errRpingDisconnected) // a server that ends disconnects
		sdone <- err
	}()
	go func() {
		err := rpingClient(cctx, client, count, true, validate, &cb)
		sgone(errRpingDisconnected) // so does a client
		cdone <- err
	}()
	cliErr, srvErr = <-cdone, <-sdone
	return cb.String(), sb.String(), cliErr, srvErr
}

func TestRpingLoops(t *testing.T) {
	client, server := memPair(64)
	cli, srv, cerr, serr := runPair(t, client, server, 3, true)
	if cerr != nil || serr != nil {
		t.Fatalf("client %v, server %v", cerr, serr)
	}
	var wantCli, wantSrv strings.Builder
	for ping := range 3 {
		b := make([]byte, 64)
		rpingFill(b, ping)
		fmt.Fprintf(&wantCli, "ping data: %s\n", cString(b))
		fmt.Fprintf(&wantSrv, "server ping data: %s\n", cString(b))
	}
	if diff := cmp.Diff(wantCli.String(), cli); diff != "" {
		t.Errorf("unexpected client output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSrv.String(), srv); diff != "" {
		t.Errorf("unexpected server output (-want +got):\n%s", diff)
	}
}

func TestRpingValidate(t *testing.T) {
	client, server := memPair(64)
	server.corrupt = true
	_, _, cerr, _ := runPair(t, client, server, 2, true)
	if cerr == nil || cerr.Error() != "ping 0: data mismatch!" {
		t.Errorf("got %v, want a data mismatch", cerr)
	}
}

// TestRpingPeerGone: a server gone mid-transfer ends the client with an
// error that says so; a client gone in the middle of a ping ends the
// server with an error, one gone between pings is its normal end.
func TestRpingPeerGone(t *testing.T) {
	client, server := memPair(64)
	server.stopAfter = 3 // the go-ahead after the second ping's read never comes
	_, _, cerr, _ := runPair(t, client, server, 0, false)
	if cerr == nil || !errors.Is(cerr, errRpingDisconnected) || !strings.Contains(cerr.Error(), "ping 1: waiting for the server to write the data back") {
		t.Errorf("client: got %v", cerr)
	}

	client, server = memPair(64)
	client.stopAfter = 3 // the second ping's sink never comes
	_, _, _, serr := runPair(t, client, server, 0, false)
	if serr == nil || !errors.Is(serr, errRpingDisconnected) || !strings.Contains(serr.Error(), "ping 1: waiting for the client's sink buffer") {
		t.Errorf("server: got %v", serr)
	}
}

// TestRpingPeerGoneFlushed: a peer gone with the receive flushed before
// the CM's DISCONNECTED event (Soft-iWARP) reads as the peer gone, not as
// the flush: the client's error says so, the server's end is normal.
func TestRpingPeerGoneFlushed(t *testing.T) {
	client, server := memPair(64)
	server.stopAfter, server.flush = 3, true
	_, _, cerr, _ := runPair(t, client, server, 0, false)
	if cerr == nil || cerr.Error() != "ping 1: waiting for the server to write the data back: the peer disconnected" {
		t.Errorf("client: got %v", cerr)
	}

	client, server = memPair(64)
	client.stopAfter, client.flush = 4, true // between the second and third ping
	_, _, _, serr := runPair(t, client, server, 0, false)
	if serr != nil {
		t.Errorf("server: got %v, want its normal end", serr)
	}

	// A flush the CM never explains stays the error it is.
	old := cmFlushWait
	t.Cleanup(func() { cmFlushWait = old })
	cmFlushWait = 10 * time.Millisecond
	client, server = memPair(64)
	server.stopAfter, server.flush = 3, true
	server.peerGone = func(error) {}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() { _ = rpingServer(ctx, server, false, &strings.Builder{}) }()
	cerr = rpingClient(ctx, client, 0, false, false, &strings.Builder{})
	if cerr == nil || !strings.Contains(cerr.Error(), "Work Request Flushed Error") {
		t.Errorf("client, no DISCONNECTED: got %v", cerr)
	}
}

// TestRpingPortDown: the port going down under a transfer (rpingWatch's
// port watch ends the context with it) ends the waiting side with an
// error that names the port, not as the peer's disconnect; the device's
// failure is said as such.
func TestRpingPortDown(t *testing.T) {
	for _, tt := range []struct {
		down verbs.PortDownError
		want string
	}{
		{verbs.PortDownError{Device: "rxe0", Port: 1, Event: verbs.EventPortErr},
			"ping 1: waiting for the server to write the data back: port 1 of rxe0 went down (IBV_EVENT_PORT_ERR)"},
		{verbs.PortDownError{Device: "rxe0", Port: 1, Event: verbs.EventDeviceFatal},
			"ping 1: waiting for the server to write the data back: device rxe0 failed (IBV_EVENT_DEVICE_FATAL)"},
	} {
		client, server := memPair(64)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cctx, down := context.WithCancelCause(ctx)
		server.stopAfter = 3 // the go-ahead after the second ping's read never comes
		server.peerGone = func(error) { down(&tt.down) }
		go func() { _ = rpingServer(ctx, server, false, &strings.Builder{}) }()
		err := rpingClient(cctx, client, 0, false, false, &strings.Builder{})
		cancel()
		var pd *verbs.PortDownError
		if err == nil || err.Error() != tt.want || !errors.As(err, &pd) || errors.Is(err, errRpingDisconnected) {
			t.Errorf("client: got %v, want %q", err, tt.want)
		}
	}

	// A failed work request, and the port's word a moment after it: the
	// port is why, the request is said too.
	client, server := memPair(64)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cctx, down := context.WithCancelCause(ctx)
	server.stopAfter, server.flush = 3, true
	server.peerGone = func(error) {
		go func() {
			time.Sleep(20 * time.Millisecond)
			down(&verbs.PortDownError{Device: "rxe0", Port: 1, Event: verbs.EventPortErr})
		}()
	}
	go func() { _ = rpingServer(ctx, server, false, &strings.Builder{}) }()
	err := rpingClient(cctx, client, 0, false, false, &strings.Builder{})
	want := "ping 1: waiting for the server to write the data back: port 1 of rxe0 went down (IBV_EVENT_PORT_ERR); "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "Work Request Flushed Error") {
		t.Errorf("client, failed request then port down: got %v, want %q and the request", err, want)
	}

	// The server, waiting for a ping's source buffer.
	client, server = memPair(64)
	sctx, sdown := context.WithCancelCause(ctx)
	client.stopAfter = 4 // between the second and the third ping
	client.peerGone = func(error) { sdown(&verbs.PortDownError{Device: "rxe1", Port: 1, Event: verbs.EventPortErr}) }
	go func() { _ = rpingClient(ctx, client, 0, false, false, &strings.Builder{}) }()
	err = rpingServer(sctx, server, false, &strings.Builder{})
	want = "ping 2: waiting for the client's source buffer: port 1 of rxe1 went down (IBV_EVENT_PORT_ERR)"
	if err == nil || err.Error() != want {
		t.Errorf("server: got %v, want %q", err, want)
	}

	// The server's receive failing first, the port's word after it.
	client, server = memPair(64)
	sctx, sdown = context.WithCancelCause(ctx)
	client.stopAfter, client.flush = 4, true
	client.peerGone = func(error) {
		go func() {
			time.Sleep(20 * time.Millisecond)
			sdown(&verbs.PortDownError{Device: "rxe1", Port: 1, Event: verbs.EventPortErr})
		}()
	}
	go func() { _ = rpingClient(ctx, client, 0, false, false, &strings.Builder{}) }()
	err = rpingServer(sctx, server, false, &strings.Builder{})
	want = "ping 2: waiting for the client's source buffer: port 1 of rxe1 went down (IBV_EVENT_PORT_ERR); "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "Work Request Flushed Error") {
		t.Errorf("server, failed receive then port down: got %v, want %q and the request", err, want)
	}
}

// TestRpingSizes: a client's buffer bigger than the server's -S is an
// error, not a READ past the server's buffer.
func TestRpingSizes(t *testing.T) {
	client, _ := memPair(100)
	_, server := memPair(64)
	client.peer, server.peer = server, client
	_, _, _, serr := runPair(t, client, server, 1, false)
	if serr == nil || !strings.Contains(serr.Error(), "the client's 100 bytes do not fit in this side's 64 (-S)") {
		t.Errorf("got %v", serr)
	}
}
