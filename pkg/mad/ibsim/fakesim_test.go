package ibsim

import (
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSim is a minimal ibsim on abstract unix sockets for unit tests: it
// answers control requests with the Hca1 captures and echoes each data
// frame back as a response.
type fakeSim struct {
	t    *testing.T
	name string
	ctl  *net.UnixConn

	mute        atomic.Bool  // stop answering control requests
	refuse      atomic.Bool  // answer CONNECT with ERROR
	refuseType  atomic.Int32 // answer requests of this ctlType with ERROR, when not 0
	disconnects atomic.Int32
	// stopped makes the fake read nothing, as ibsim under SIGSTOP: what
	// clients send waits in the sockets until it is cleared.
	stopped atomic.Bool
	// lostClients counts CONNECTs whose client socket was gone: real
	// ibsim aborts there.
	lostClients atomic.Int32

	mu     sync.Mutex
	frames []request // data frames received
	outs   []*net.UnixConn
}

func abstractAddr(format string, args ...any) *net.UnixAddr {
	return &net.UnixAddr{Name: "@" + fmt.Sprintf(format, args...) + "\x00", Net: "unixgram"}
}

var fakeSeq atomic.Int32

func newFakeSim(t *testing.T) *fakeSim {
	t.Helper()
	needLittleEndian(t)
	f := &fakeSim{t: t, name: fmt.Sprintf("ibtool-fake-%d-%d", os.Getpid(), fakeSeq.Add(1))}
	ctl, err := net.ListenUnixgram("unixgram", abstractAddr("%s:ctl", f.name))
	if err != nil {
		t.Fatal(err)
	}
	f.ctl = ctl
	go f.serveCtl()
	t.Cleanup(func() {
		ctl.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, o := range f.outs {
			o.Close()
		}
	})
	return f
}

func (f *fakeSim) config() Config {
	return Config{SockName: f.name, Host: "Hca1", Timeout: 300 * time.Millisecond}
}

func (f *fakeSim) serveCtl() {
	buf := make([]byte, 128)
	for {
		n, from, err := f.ctl.ReadFromUnix(buf)
		if err != nil {
			return
		}
		f.waitRunning() // what came holds until the fake runs again
		var m ctlMsg
		if m.unmarshal(buf[:n]) != nil || f.mute.Load() {
			continue
		}
		f.handle(&m)
		m.marshal(buf)
		// Go reports an abstract peer name up to its first NUL, dropping
		// the NUL that ibsim-style names end in; put it back to answer.
		from.Name += "\x00"
		f.ctl.WriteToUnix(buf[:ctlMsgLen], from)
	}
}

func (f *fakeSim) handle(m *ctlMsg) {
	fill := func(hexData string) { copy(m.Data[:], unhex(f.t, hexData)) }
	if t := f.refuseType.Load(); t != 0 && ctlType(t) == m.Type {
		m.Type = ctlError
		return
	}
	switch m.Type {
	case ctlConnect:
		var ci clientInfo
		ci.unmarshal(m.Data[:])
		if f.refuse.Load() {
			m.Type = ctlError
			return
		}
		f.mu.Lock()
		n := len(f.outs)
		out, err := net.DialUnix("unixgram", abstractAddr("%s:out%d", f.name, n), abstractAddr("%s:in%d", f.name, ci.ID))
		if err != nil {
			f.mu.Unlock()
			f.lostClients.Add(1)
			m.Type = ctlError
			return
		}
		f.outs = append(f.outs, out)
		f.mu.Unlock()
		go f.echo(out)
		ci.ID = uint32(n)
		ci.marshal(m.Data[:])
	case ctlDisconnect:
		f.disconnects.Add(1)
	case ctlGetVendor:
		fill(capturedHca1Vendor)
	case ctlGetNodeInfo:
		fill(capturedHca1NodeInfo)
	case ctlGetPortInfo:
		fill(capturedHca1PortInfo)
	case ctlGetPKeys:
		fill(capturedHca1PKeys)
	}
}

// echo answers every frame: the MAD comes back with the R bit set and the
// addresses swapped, as ibsim's SMA does; a frame whose MAD attribute ID is
// 0xdead is first answered with a runt datagram.
func (f *fakeSim) echo(out *net.UnixConn) {
	buf := make([]byte, requestLen+1)
	for {
		n, err := out.Read(buf)
		if err != nil {
			return
		}
		f.waitRunning()
		var r request
		if r.unmarshal(buf[:n]) != nil {
			continue
		}
		f.mu.Lock()
		f.frames = append(f.frames, r)
		f.mu.Unlock()
		if r.MAD[16] == 0xde && r.MAD[17] == 0xad {
			out.Write(buf[:10])
		}
		r.MAD[3] |= 0x80
		r.DLID, r.SLID = r.SLID, r.DLID
		r.DQP, r.SQP = r.SQP, r.DQP
		r.marshal(buf)
		out.Write(buf[:requestLen])
	}
}

func (f *fakeSim) lastFrame() request {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.frames) == 0 {
		f.t.Fatal("fake ibsim got no data frame")
	}
	return f.frames[len(f.frames)-1]
}

// waitRunning returns once the fake is not stopped.
func (f *fakeSim) waitRunning() {
	for f.stopped.Load() {
		time.Sleep(time.Millisecond)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
