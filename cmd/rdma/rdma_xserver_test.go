package rdma

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdmacm"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestRdmaXArgs(t *testing.T) {
	for _, server := range []bool{true, false} {
		name, newCmd := "rdma_xclient", func(f *cmdutil.Factory, runF func(*rdmaXOptions) error) *cobra.Command {
			return newRdmaXCmd(f, false, runF)
		}
		def := rdmaXOptions{Addr: "127.0.0.1", Port: "7471"}
		tests := []argsCase[rdmaXOptions]{
			{"-s and -p", []string{"-s", "192.0.2.1", "-p", "7000"}, rdmaXOptions{Addr: "192.0.2.1", Port: "7000"}, ""},
			{"-s on the server only", []string{"--server=192.0.2.1"}, rdmaXOptions{Addr: "192.0.2.1", Port: "7471"}, ""},
		}
		if server {
			name, newCmd = "rdma_xserver", func(f *cmdutil.Factory, runF func(*rdmaXOptions) error) *cobra.Command {
				return newRdmaXCmd(f, true, runF)
			}
			def = rdmaXOptions{Server: true, Port: "7471"}
			tests = []argsCase[rdmaXOptions]{
				{"-p", []string{"-p", "7000"}, rdmaXOptions{Server: true, Port: "7000"}, ""},
				{"no -s", []string{"-s", "192.0.2.1"}, rdmaXOptions{}, "unknown shorthand flag: 's'"},
			}
		}
		with := func(f func(o *rdmaXOptions)) rdmaXOptions { o := def; f(&o); return o }
		xrc := with(func(o *rdmaXOptions) { o.XRC = true })
		tests = append(tests,
			argsCase[rdmaXOptions]{"defaults: RC", nil, def, ""},
			argsCase[rdmaXOptions]{"-c r", []string{"-c", "r"}, def, ""},
			argsCase[rdmaXOptions]{"-c x", []string{"-c", "x"}, xrc, ""},
			// rdmacm-utils' read the first letter, in either case.
			argsCase[rdmaXOptions]{"-c XRC", []string{"-c", "XRC"}, xrc, ""},
			argsCase[rdmaXOptions]{"--comm=Rc", []string{"--comm=Rc"}, def, ""},
			argsCase[rdmaXOptions]{"-c u", []string{"-c", "u"}, rdmaXOptions{}, `invalid -c communication type "u"`},
			argsCase[rdmaXOptions]{"-c empty", []string{"-c", ""}, rdmaXOptions{}, `invalid -c communication type ""`},
			argsCase[rdmaXOptions]{"an argument", []string{"extra"}, rdmaXOptions{}, "extra"},
		)
		t.Run(name, func(t *testing.T) {
			testArgs(t, name, newCmd, tests, cmpopts.IgnoreUnexported(rdmaXOptions{}), cmpopts.IgnoreFields(rdmaXOptions{}, "IO"))
		})
	}
}

// fakeXEndpoint is rdmaXEndpoint without a kernel: it records the steps,
// fails the one the test names, and hands the client the server's
// private data.
type fakeXEndpoint struct {
	steps       []string
	fail        map[string]error
	srqn        uint32 // createSRQ's
	privateData []byte // connect's
	dst, src    netip.AddrPort
	accepted    []byte
	sentTo      uint32
	// down is the port that goes down in the step of that name, which
	// waits until the run's port watch ends its context then.
	down  map[string]*verbs.PortDownError
	ports *cmPortWatch
}

func (e *fakeXEndpoint) step(name string) error {
	e.steps = append(e.steps, name)
	return e.fail[name]
}

// wait is step for a step that waits for the peer.
func (e *fakeXEndpoint) wait(ctx context.Context, name string) error {
	if err := e.step(name); err != nil {
		return err
	}
	pd := e.down[name]
	if pd == nil {
		return nil
	}
	e.ports.watch(pd.Device, func(context.Context) error { return pd })
	<-ctx.Done()
	return fmt.Errorf("%s: %w", name, ctx.Err())
}

func (e *fakeXEndpoint) resolve(_ context.Context, dst netip.AddrPort) error {
	e.dst = dst
	return e.step("resolve")
}
func (e *fakeXEndpoint) bind(src netip.AddrPort) error        { e.src = src; return e.step("bind") }
func (e *fakeXEndpoint) listen() error                        { return e.step("listen") }
func (e *fakeXEndpoint) getRequest(ctx context.Context) error { return e.wait(ctx, "getRequest") }
func (e *fakeXEndpoint) createSRQ() (uint32, error)           { return e.srqn, e.step("createSRQ") }
func (e *fakeXEndpoint) regMsgs() error                       { return e.step("regMsgs") }
func (e *fakeXEndpoint) postRecv() error                      { return e.step("postRecv") }
func (e *fakeXEndpoint) postSend(srqn uint32) error           { e.sentTo = srqn; return e.step("postSend") }
func (e *fakeXEndpoint) disconnect()                          { e.step("disconnect") }
func (e *fakeXEndpoint) close()                               { e.step("close") }
func (e *fakeXEndpoint) connect(ctx context.Context) ([]byte, error) {
	return e.privateData, e.wait(ctx, "connect")
}
func (e *fakeXEndpoint) accept(_ context.Context, pd []byte) error {
	e.accepted = pd
	return e.step("accept")
}
func (e *fakeXEndpoint) completion(ctx context.Context, want verbs.WCOpcode) error {
	return e.wait(ctx, "completion "+want.String())
}

// The errors the kernel's CM and libibverbs give on the failure paths.
var (
	errUnreachable = &rdmacm.Error{Op: "resolve address", Addr: netip.MustParseAddrPort("198.51.100.99:7471"),
		Err: syscall.ENETUNREACH}
	errRejected = &rdmacm.Error{Op: "connect", Addr: netip.MustParseAddrPort("198.51.100.2:7999"),
		Event: &rdmacm.Event{Type: rdmacm.EventRejected, Status: 8}, Err: errors.New("RDMA_CM_EVENT_REJECTED, error 8")}
	errNoXRC = &rdmacm.Error{Op: "create QP", Addr: netip.MustParseAddrPort("198.51.100.2:7471"),
		Err: fmt.Errorf("%w: rxe0 PD 1 (XRC_SEND, 1 send and 0 receive WRs): ibv_create_qp: %w", rdmacm.ErrNoXRC, syscall.EOPNOTSUPP)}
	errFlushed = errors.New("rxe0 CQ 1: work completion: WR flushed error (5)")
)

func TestRdmaXRun(t *testing.T) {
	clientSteps := []string{"resolve", "regMsgs", "connect", "postSend", "completion SEND", "disconnect", "close"}
	serverSteps := []string{"bind", "listen", "getRequest", "regMsgs", "postRecv", "accept", "completion RECV", "disconnect", "close"}
	xrcServerSteps := []string{"bind", "listen", "getRequest", "createSRQ", "regMsgs", "postRecv", "accept", "completion RECV", "disconnect", "close"}
	tests := []struct {
		name     string
		o        rdmaXOptions
		ep       fakeXEndpoint
		steps    []string
		out      string
		err      string
		exit     int
		accepted []byte // the server's accept's private data
		sentTo   uint32 // the client's send's SRQ
	}{
		{name: "client, RC", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471"}, ep: fakeXEndpoint{privateData: []byte{0, 0, 0, 0}},
			steps: clientSteps, out: "rdma_xclient: start\nrdma_xclient: end 0\n"},
		{name: "client, XRC: the send goes to the SRQ of the server's private data", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471", XRC: true},
			ep: fakeXEndpoint{privateData: []byte{0, 0, 0x12, 0x34}}, steps: clientSteps, sentTo: 0x1234,
			out: "rdma_xclient: start\nrdma_xclient: end 0\n"},
		{name: "server, RC: four zero bytes of private data", o: rdmaXOptions{Server: true, Port: "7471"},
			steps: serverSteps, accepted: []byte{0, 0, 0, 0}, out: "rdma_xserver: start\nrdma_xserver: end 0\n"},
		{name: "server, XRC: the SRQ number as private data", o: rdmaXOptions{Server: true, Port: "7471", XRC: true},
			ep: fakeXEndpoint{srqn: 0xabcdef}, steps: xrcServerSteps, accepted: []byte{0, 0xab, 0xcd, 0xef},
			out: "rdma_xserver: start\nrdma_xserver: end 0\n"},
		{name: "client: a host that does not resolve", o: rdmaXOptions{Addr: "nowhere.invalid", Port: "7471"},
			steps: []string{"close"}, out: "rdma_xclient: start\nrdma_getaddrinfo: nowhere.invalid: Name or service not known: no such host\nrdma_xclient: end -2\n",
			err: "nowhere.invalid: Name or service not known: no such host", exit: 254},
		{name: "client: an unreachable address", o: rdmaXOptions{Addr: "198.51.100.99", Port: "7471"},
			ep: fakeXEndpoint{fail: map[string]error{"resolve": errUnreachable}}, steps: []string{"resolve", "close"},
			out: "rdma_xclient: start\nrdma_xclient: end -1\n", err: "rdma_create_ep: " + errUnreachable.Error(), exit: 255},
		{name: "client: rejected", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7999"},
			ep: fakeXEndpoint{fail: map[string]error{"connect": errRejected}}, steps: []string{"resolve", "regMsgs", "connect", "close"},
			out: "rdma_xclient: start\nrdma_xclient: end -1\n", err: "rdma_connect: " + errRejected.Error(), exit: 255},
		{name: "client, XRC: the device has no XRC", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471", XRC: true},
			ep: fakeXEndpoint{fail: map[string]error{"resolve": errNoXRC}}, steps: []string{"resolve", "close"},
			out: "rdma_xclient: start\nrdma_xclient: end -1\n", err: "rdma_create_ep: " + errNoXRC.Error(), exit: 255},
		{name: "server, XRC: the device has no XRC", o: rdmaXOptions{Server: true, Port: "7471", XRC: true},
			ep: fakeXEndpoint{fail: map[string]error{"getRequest": errNoXRC}}, steps: []string{"bind", "listen", "getRequest", "close"},
			out: "rdma_xserver: start\nrdma_xserver: end -1\n", err: "rdma_get_request: " + errNoXRC.Error(), exit: 255},
		{name: "server, XRC: the SRQ fails", o: rdmaXOptions{Server: true, Port: "7471", XRC: true},
			ep: fakeXEndpoint{fail: map[string]error{"createSRQ": syscall.ENOMEM}}, steps: []string{"bind", "listen", "getRequest", "createSRQ", "close"},
			out: "rdma_xserver: start\nrdma_xserver: end -1\n", err: "rdma_create_srq: cannot allocate memory", exit: 255},
		{name: "client, XRC: no SRQ number in the reply", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471", XRC: true},
			ep: fakeXEndpoint{privateData: []byte{1}}, steps: []string{"resolve", "regMsgs", "connect", "disconnect", "close"},
			out: "rdma_xclient: start\nrdma_xclient: end -1\n", err: "rdma_connect: the server's reply has 1 bytes of private data, not the 4 of its XRC SRQ number", exit: 255},
		{name: "server: the port is taken", o: rdmaXOptions{Server: true, Port: "7471"},
			ep: fakeXEndpoint{fail: map[string]error{"bind": syscall.EADDRINUSE}}, steps: []string{"bind", "close"},
			out: "rdma_xserver: start\nrdma_xserver: end -1\n", err: "rdma_create_ep: address already in use", exit: 255},
		{name: "server: the client gone before its message", o: rdmaXOptions{Server: true, Port: "7471"},
			ep: fakeXEndpoint{fail: map[string]error{"completion RECV": errFlushed}}, steps: serverSteps, accepted: []byte{0, 0, 0, 0},
			out: "rdma_xserver: start\nrdma_xserver: end -1\n", err: errFlushed.Error(), exit: 255},
		{name: "client: the server gone before the send completed", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471"},
			ep: fakeXEndpoint{fail: map[string]error{"completion SEND": errFlushed}}, steps: clientSteps,
			out: "rdma_xclient: start\nrdma_xclient: end -1\n", err: errFlushed.Error(), exit: 255},
		{name: "client: the send is refused", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471"},
			ep: fakeXEndpoint{fail: map[string]error{"postSend": syscall.EINVAL}}, steps: []string{"resolve", "regMsgs", "connect", "postSend", "disconnect", "close"},
			out: "rdma_xclient: start\nrdma_xclient: end -1\n", err: "rdma_post_send: invalid argument", exit: 255},
		// The port going down (the run's port watch) ends the wait it
		// comes in, with exit 3 and the port named.
		{name: "client: the port goes down while it waits for the server's reply", o: rdmaXOptions{Addr: "198.51.100.2", Port: "7471"},
			ep:    fakeXEndpoint{down: map[string]*verbs.PortDownError{"connect": {Device: "rxecm0", Port: 1, Event: verbs.EventPortErr}}},
			steps: []string{"resolve", "regMsgs", "connect", "close"}, out: "rdma_xclient: start\nrdma_xclient: end 3\n",
			err: "port 1 of rxecm0 went down (IBV_EVENT_PORT_ERR)", exit: 3},
		{name: "server: the port goes down while it waits for the message", o: rdmaXOptions{Server: true, Port: "7471"},
			ep:    fakeXEndpoint{down: map[string]*verbs.PortDownError{"completion RECV": {Device: "rxecm1", Port: 1, Event: verbs.EventPortErr}}},
			steps: serverSteps, accepted: []byte{0, 0, 0, 0}, out: "rdma_xserver: start\nrdma_xserver: end 3\n",
			err: "port 1 of rxecm1 went down (IBV_EVENT_PORT_ERR)", exit: 3},
		{name: "server: the device fails while it waits for a request", o: rdmaXOptions{Server: true, Port: "7471"},
			ep:    fakeXEndpoint{down: map[string]*verbs.PortDownError{"getRequest": {Device: "rxecm1", Port: 1, Event: verbs.EventDeviceFatal}}},
			steps: []string{"bind", "listen", "getRequest", "close"}, out: "rdma_xserver: start\nrdma_xserver: end 3\n",
			err: "device rxecm1 failed (IBV_EVENT_DEVICE_FATAL)", exit: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, _ := cmdutil.NewTestFactory(nil)
			o := tt.o
			ep := tt.ep
			o.IO, o.ctx = f.IO, context.Background()
			o.resolve = func(context.Context, string) (netip.Addr, error) { return netip.Addr{}, errors.New("no such host") }
			o.endpoint = func(o *rdmaXOptions) rdmaXEndpoint { ep.ports = o.ports; return &ep }
			err := rdmaXRun(&o)
			if diff := cmp.Diff(tt.steps, ep.steps); diff != "" {
				t.Errorf("unexpected steps (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.out, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.err || cmdutil.ExitCode(err) != tt.exit {
				t.Errorf("error %q, exit %d; want %q, exit %d", got, cmdutil.ExitCode(err), tt.err, tt.exit)
			}
			if diff := cmp.Diff(tt.accepted, ep.accepted); diff != "" {
				t.Errorf("unexpected accept private data (-want +got):\n%s", diff)
			}
			if ep.sentTo != tt.sentTo {
				t.Errorf("send to SRQ %#x, want %#x", ep.sentTo, tt.sentTo)
			}
			if o.Server && ep.src.String() != "[::]:7471" {
				t.Errorf("server bound %s, want [::]:7471 (cmPassive's, as TestMain set it)", ep.src)
			}
			if !o.Server && ep.dst.IsValid() && !strings.HasSuffix(ep.dst.String(), ":"+o.Port) {
				t.Errorf("client resolved %s, want port %s", ep.dst, o.Port)
			}
		})
	}
}

// TestRdmaXServerWildcard: the server listens on the wildcard a passive
// rdma_getaddrinfo gives first (cmPassive), IPv4 or IPv6; a failed
// lookup prints rdma_xserver's line and exits with getaddrinfo's code.
func TestRdmaXServerWildcard(t *testing.T) {
	tests := []struct {
		name  string
		first netip.Addr
		err   error
		want  string
		out   string
		exit  int
	}{
		{"IPv4 first (lo up)", netip.IPv4Unspecified(), nil, "0.0.0.0:7481", "rdma_xserver: start\nrdma_xserver: end 0\n", 0},
		{"IPv6 first (lo down)", netip.IPv6Unspecified(), nil, "[::]:7481", "rdma_xserver: start\nrdma_xserver: end 0\n", 0},
		{"getaddrinfo fails", netip.Addr{}, &rdmacm.AddrInfoError{Code: -11, Msg: "System error"}, "invalid AddrPort",
			"rdma_xserver: start\nrdma_getaddrinfo: System error\nrdma_xserver: end -11\n", 245},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setPassive(t, tt.first, tt.err)
			f, out, _ := cmdutil.NewTestFactory(nil)
			ep := &fakeXEndpoint{}
			o := rdmaXOptions{IO: f.IO, ctx: context.Background(), Server: true, Port: "7481",
				endpoint: func(*rdmaXOptions) rdmaXEndpoint { return ep }}
			err := rdmaXRun(&o)
			if diff := cmp.Diff(tt.out, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			if ep.src.String() != tt.want || cmdutil.ExitCode(err) != tt.exit {
				t.Errorf("bound %s, exit %d (%v); want %s, exit %d", ep.src, cmdutil.ExitCode(err), err, tt.want, tt.exit)
			}
		})
	}
}
