package ibsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// An attach that Dial abandons after sending CONNECT (ibsim stopped, or
// the tool interrupted) is not over for ibsim: when it gets to the
// CONNECT it connects to the client's data socket, and it aborts
// (sim_ctl_new_client's IBPANIC) if that socket is gone by then. A keeper
// holds the client's two sockets until ibsim answers the CONNECT, then
// sends DISCONNECT, so ibsim neither dies nor keeps the slot.
//
// A tool that is interrupted must still end at once, so the keeper is
// another process: the same program started again (/proc/self/exe) with
// the sockets as descriptors 3 and 4 and keeperEnv saying where ibsim is.
// A program opts in by calling ServeKeeper first thing in main; in one
// that does not (a test binary), the keeper is a goroutine, which lives
// as long as the process.

// keeperEnv carries a keeper's Config, as JSON, to the process started as
// one.
const keeperEnv = "IBTOOL_IBSIM_KEEPER"

// Descriptors of a keeper process: the control socket (connected to
// ibsim's) and the data socket ibsim connects to.
const (
	keeperCtlFD  = 3
	keeperDataFD = 4
)

// keeperPoll is how often a waiting keeper checks that ibsim still
// exists; keeperMaxWait is how long it waits at most for an ibsim that
// exists but does not answer (stopped for a day).
const (
	keeperPoll    = time.Second
	keeperMaxWait = 24 * time.Hour
)

// reexec is set by ServeKeeper in a process that is not a keeper: Dial may
// start the program again as one.
var reexec atomic.Bool

// ServeKeeper, in a process started as a keeper by Dial, keeps the
// abandoned attach it was given and exits. In any other process it
// returns at once and lets Dial start keepers by running the program
// again. A program that uses Dial calls it first thing in main.
func ServeKeeper() {
	spec, ok := os.LookupEnv(keeperEnv)
	if !ok {
		reexec.Store(true)
		return
	}
	// The tool that started it may have been stopped by a terminal's
	// Ctrl-C or hang-up, which reach its whole process group.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP)
	var cfg Config
	if err := json.Unmarshal([]byte(spec), &cfg); err != nil {
		os.Exit(2)
	}
	ctl, err := net.FileConn(os.NewFile(keeperCtlFD, "ibsim control socket"))
	if err != nil {
		os.Exit(2)
	}
	data := os.NewFile(keeperDataFD, "ibsim data socket") // held open, never read
	err = keep(cfg, ctl)
	ctl.Close()
	data.Close()
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// keepAttach hands an abandoned attach's sockets to a keeper: a process
// when the program opted in (ServeKeeper), else a goroutine. The caller
// closes its own copies of the sockets afterwards.
func keepAttach(cfg Config, s *sockets) error {
	ctlF, err := fileOf(s.ctl)
	if err != nil {
		return fmt.Errorf("keeping the attach for ibsim: %w", err)
	}
	defer ctlF.Close()
	dataF, err := fileOf(s.data)
	if err != nil {
		return fmt.Errorf("keeping the attach for ibsim: %w", err)
	}
	defer dataF.Close()
	if reexec.Load() {
		return startKeeper(cfg, ctlF, dataF)
	}
	ctl, err := net.FileConn(ctlF)
	if err != nil {
		return fmt.Errorf("keeping the attach for ibsim: %w", err)
	}
	data, err := net.FilePacketConn(dataF)
	if err != nil {
		ctl.Close()
		return fmt.Errorf("keeping the attach for ibsim: %w", err)
	}
	go func() {
		keep(cfg, ctl)
		ctl.Close()
		data.Close()
	}()
	return nil
}

// fileOf returns a duplicate of a socket's descriptor.
func fileOf(c any) (*os.File, error) {
	f, ok := c.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, fmt.Errorf("%T has no descriptor", c)
	}
	return f.File()
}

// startKeeper starts this program again as a keeper of the sockets, in a
// process group of its own, and reaps it when it ends.
func startKeeper(cfg Config, ctl, data *os.File) error {
	spec, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	k := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{"ibsim-keeper"},
		Env:         append(os.Environ(), keeperEnv+"="+string(spec)),
		ExtraFiles:  []*os.File{ctl, data},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := k.Start(); err != nil {
		return fmt.Errorf("starting a keeper for the unanswered CONNECT (ibsim may abort when it gets to it): %w", err)
	}
	go k.Wait()
	return nil
}

// errIBSimGone is keep's error when ibsim went away before it answered.
var errIBSimGone = errors.New("ibsim has gone")

// keep waits on ctl for ibsim's answer to the CONNECT sent on it, then
// disconnects the client ibsim made. It gives up when ibsim has gone, or
// after keeperMaxWait.
func keep(cfg Config, ctl net.Conn) error {
	end := time.Now().Add(keeperMaxWait)
	var buf [ctlMsgLen + 1]byte
	for time.Now().Before(end) {
		ctl.SetReadDeadline(time.Now().Add(keeperPoll))
		n, err := ctl.Read(buf[:])
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if !cfg.alive() {
				return errIBSimGone
			}
			continue
		}
		if err != nil {
			return err
		}
		var rep ctlMsg
		if rep.unmarshal(buf[:n]) != nil {
			continue
		}
		switch rep.Type {
		case ctlError:
			return nil // refused: ibsim made no client
		case ctlConnect:
			var ci clientInfo
			ci.unmarshal(rep.Data[:])
			req := ctlMsg{ClientID: ci.ID, Type: ctlDisconnect}
			req.marshal(buf[:])
			ctl.SetDeadline(time.Now().Add(cfg.timeout()))
			if _, err := ctl.Write(buf[:ctlMsgLen]); err != nil {
				return err
			}
			// ibsim's DISCONNECT touches no socket of the client's, but
			// its answer says the slot is free.
			_, err := ctl.Read(buf[:])
			return err
		}
	}
	return fmt.Errorf("no answer to CONNECT within %v", keeperMaxWait)
}

// alive reports whether ibsim's control socket still exists. Over UDP
// there is no telling without sending, so it reports true.
func (c *Config) alive() bool {
	if c.inet() {
		return true
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: "@" + c.sockName() + ":ctl\x00", Net: "unixgram"})
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
