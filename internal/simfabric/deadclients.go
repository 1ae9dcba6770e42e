package simfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/mad/ibsim"
)

// A client attaches by sending CONNECT to ibsim's control socket; ibsim
// then connects its socket for the client to the client's data socket,
// "<sock>:in<id>", and ibsim 0.10 exits when that fails
// (sim_ctl_new_client's IBPANIC). So a client that ends before ibsim has
// read its CONNECT kills ibsim: one that attached while ibsim was frozen
// and ended before the thaw, one killed by a signal while a busy ibsim had
// not read its CONNECT yet, one that sends CONNECT and exits without
// waiting for the answer.
//
// The runners bind the data socket names of a tool that ended during a
// freeze, or that a signal may have ended half way (toolEnded); then, with
// ibsim running, they make sure it has read every control message sent
// before, free the dead clients' slots and let the names go
// (settleClients; Thaw does that for a tool that ended during a freeze).
// The names are drained meanwhile: ibsim spins on a client socket that is
// full (its writes loop on EAGAIN). During a freeze that is certain to
// work; otherwise ibsim may read the CONNECT before the runner has bound
// the name, and a client that gives up its attach is the client's to fix.

// heldIDs is how many of a process's client ids toolEnded binds: the PID,
// and the PID plus 1, 2, 3 << 22 that pkg/mad/ibsim gives a process's
// second and later clients.
const heldIDs = 4

// pidMask takes the PID out of the id a client gives ibsim, which shows it
// as the client's pid (see heldIDs): such a client is no less alive than
// its process.
const pidMask = 1<<22 - 1

// killed reports whether a signal ended the process.
func killed(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// toolEnded is what a runner does once its tool, process pid, has ended,
// before any thaw: when the tool may have left an attach half way (maybe:
// it was killed, or sent a signal that makes it give up) or the fabric is
// frozen, it binds the tool's data socket names that are free, and reports
// that settleClients is owed.
func (f *Fabric) toolEnded(pid int, maybe bool) bool {
	if !maybe && !f.Frozen() {
		return false
	}
	for n := range heldIDs {
		name := fmt.Sprintf("@%s:in%d\x00", f.sockName, pid+n<<22) // ibsim counts the NUL
		if c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"}); err == nil {
			f.hold(c)
		}
	}
	return true
}

// hold keeps c until settleClients or Stop, and drains it meanwhile.
func (f *Fabric) hold(c net.PacketConn) {
	f.heldMu.Lock()
	f.held = append(f.held, c)
	f.heldMu.Unlock()
	go func() {
		var buf [1024]byte
		for {
			if _, _, err := c.ReadFrom(buf[:]); err != nil {
				return
			}
		}
	}()
}

// holding reports whether names are held.
func (f *Fabric) holding() bool {
	f.heldMu.Lock()
	defer f.heldMu.Unlock()
	return len(f.held) > 0
}

// settleClients, with ibsim running, waits until it has read the control
// messages sent before (an attach goes through the same socket, in order,
// and returns once answered, refused or not), frees the slots of dead
// clients and lets the held names go.
func (f *Fabric) settleClients(ctx context.Context) error {
	defer f.closeHeld()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := ibsim.Dial(ctx, ibsim.Config{SockName: f.sockName})
	switch {
	case err == nil:
		c.Close()
	case !errors.Is(err, ibsim.ErrRefused):
		return fmt.Errorf("simfabric: letting ibsim take the attaches of dead clients: %w", err)
	}
	return f.releaseDeadClients(ctx)
}

// closeHeld lets the held names go.
func (f *Fabric) closeHeld() {
	f.heldMu.Lock()
	defer f.heldMu.Unlock()
	for _, c := range f.held {
		c.Close()
	}
	f.held = nil
}

// attachedRE matches a line of the console's Attached reply.
var attachedRE = regexp.MustCompile(`^Client (\d+): pid (\d+) connected`)

// releaseDeadClients frees the ibsim slots of clients whose process is
// gone (killed by a signal, a client cannot say goodbye).
func (f *Fabric) releaseDeadClients(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reply, err := f.Console(ctx, "Attached")
	if err != nil {
		return err
	}
	for _, l := range bytes.Split([]byte(reply), []byte("\n")) {
		m := attachedRE.FindSubmatch(l)
		if m == nil {
			continue
		}
		id, _ := strconv.Atoi(string(m[2]))
		if syscall.Kill(id&pidMask, 0) != syscall.ESRCH {
			continue
		}
		if _, err := f.Console(ctx, "X "+string(m[1])); err != nil {
			return err
		}
	}
	return nil
}
