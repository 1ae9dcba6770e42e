package simfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// PortRef names a port of the fabric: a node ID and a port number.
type PortRef struct {
	Node string
	Port int
}

// String formats p as ibsim's console takes it: "node"[port].
func (p PortRef) String() string { return fmt.Sprintf("\"%s\"[%d]", p.Node, p.Port) }

// Port returns the PortRef of port n of node.
func Port(node string, n int) PortRef { return PortRef{Node: node, Port: n} }

// maxConsoleLine is the longest command ibsim's console reads in one line
// (a 128-byte buffer, with room for the newline and the terminator).
const maxConsoleLine = 126

// ErrConsole is wrapped by the errors of commands that ibsim's console
// rejected (an unknown node, a bad port, an unknown command).
var ErrConsole = errors.New("ibsim console")

// Console sends one command line to ibsim's console and returns its reply,
// without the prompt that ends it. The reply of Help is cut short (it starts
// with a prompt). A reply that reports an error is returned as is, with a
// nil error: the typed helpers check replies, Console does not. After a
// successful Unlink, Link, ReLink or Clear, WaitActive waits for opensm's
// sweep, whichever process waits.
func (f *Fabric) Console(ctx context.Context, command string) (string, error) {
	// Mark opensm's log before the command: the sweep it triggers may end
	// before the reply is read.
	mark := fileSize(f.path(osmLog))
	var b strings.Builder
	err := f.console(ctx, command, func(line []byte) error {
		b.Write(line)
		b.WriteByte('\n')
		return nil
	})
	reply := b.String()
	if err == nil && isLinkChange(command) && checkReply(command, reply) == nil {
		f.markSweep(mark)
	}
	return reply, err
}

// isLinkChange reports whether a console command changes links, after
// which the switches' traps make opensm sweep.
func isLinkChange(command string) bool {
	verb, _, _ := strings.Cut(strings.TrimSpace(command), " ")
	switch strings.ToLower(verb) {
	case "unlink", "link", "relink", "clear":
		return true
	}
	return false
}

// Unlink cuts the link at port p, as a pulled cable: both ends go
// Down/Polling and the switch sends a trap, so opensm sweeps. WaitActive
// waits for that sweep.
func (f *Fabric) Unlink(ctx context.Context, p PortRef) error {
	return f.command(ctx, "Unlink "+p.String())
}

// Link cables port a to port b; both ends come up in Init until opensm
// (woken by the switch's trap) activates them. WaitActive waits for that.
func (f *Fabric) Link(ctx context.Context, a, b PortRef) error {
	return f.command(ctx, "Link "+a.String()+" "+b.String())
}

// ReLink restores the link that Unlink cut at port p.
func (f *Fabric) ReLink(ctx context.Context, p PortRef) error {
	return f.command(ctx, "ReLink "+p.String())
}

// SetErrorRate makes ibsim drop rate percent (0 to 100) of the MADs that
// go through port p; attr, when not 0, restricts that to one attribute ID.
// Rate 0 clears it.
func (f *Fabric) SetErrorRate(ctx context.Context, p PortRef, rate int, attr uint16) error {
	if rate < 0 || rate > 100 {
		return fmt.Errorf("%w: error rate %d, want 0 to 100", ErrConsole, rate)
	}
	cmd := fmt.Sprintf("Error %s %d", p, rate)
	if attr != 0 {
		cmd += fmt.Sprintf(" %#x", attr)
	}
	return f.command(ctx, cmd)
}

// PerformanceSet sets a performance counter of port p, field being
// "Attribute.Field" as ibsim names them, for example
// "PortCounters.SymbolErrorCounter".
func (f *Fabric) PerformanceSet(ctx context.Context, p PortRef, field string, value uint64) error {
	return f.command(ctx, fmt.Sprintf("PerformanceSet %s %s=%d", p, field, value))
}

// command sends a command whose reply is empty or an acknowledgement, and
// turns an error reply into an error.
func (f *Fabric) command(ctx context.Context, cmd string) error {
	reply, err := f.Console(ctx, cmd)
	if err != nil {
		return err
	}
	return checkReply(cmd, reply)
}

// checkReply finds the error in a console reply: ibsim reports errors on
// lines that start with '#' ("# nodeid ... not found"), "command '...'
// unknown" and "bad params".
func checkReply(cmd, reply string) error {
	for _, l := range strings.Split(reply, "\n") {
		if strings.HasPrefix(l, "#") || strings.Contains(l, "unknown - skipped") ||
			strings.HasPrefix(l, "bad ") || strings.Contains(l, ": bad ") {
			return fmt.Errorf("%w: %s: %s", ErrConsole, cmd, strings.TrimSpace(strings.TrimLeft(l, "#")))
		}
	}
	return nil
}

// console sends command and calls line for each line of the reply. The
// console is held (a mutex, and a lock file for other processes) until the
// reply's prompt has been read.
func (f *Fabric) console(ctx context.Context, command string, line func([]byte) error) error {
	if strings.ContainsAny(command, "\r\n") || len(command) > maxConsoleLine {
		return fmt.Errorf("%w: command must be one line of at most %d bytes: %q", ErrConsole, maxConsoleLine, command)
	}
	if f.Frozen() {
		return fmt.Errorf("simfabric: console %q: %w (simfab thaw)", command, ErrFrozen)
	}
	f.consoleMu.Lock()
	defer f.consoleMu.Unlock()
	lock, err := os.OpenFile(f.path(consoleLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("simfabric: console lock: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("simfabric: console lock: %w", err)
	}
	out, err := os.OpenFile(f.path(consoleOut), os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("simfabric: console output: %w", err)
	}
	defer out.Close()
	start, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	// A comment line first: ibsim echoes it, so the reply to command is
	// what follows that echo, even if an earlier reply was abandoned
	// half-read.
	marker := fmt.Sprintf("#simfabric %d.%d", os.Getpid(), consoleSeq.Add(1))
	if err := f.writeConsole(marker + "\n" + command + "\n"); err != nil {
		return err
	}
	end, err := f.readReply(ctx, out, []byte(marker), line)
	if err != nil {
		return fmt.Errorf("simfabric: console %q: %w", command, err)
	}
	// A Dump of a big fabric is a gigabyte; nobody reads it again.
	if end-start > 1<<20 {
		_ = unix.Fallocate(int(out.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, start, end-start)
	}
	return nil
}

// consoleSeq numbers console commands for their markers.
var consoleSeq atomic.Uint64

// writeConsole writes lines to the console FIFO. The open does not
// block: it fails (ENXIO) when no ibsim holds the FIFO.
func (f *Fabric) writeConsole(lines string) error {
	fd, err := unix.Open(f.path(consoleFIFO), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENXIO) {
			return fmt.Errorf("simfabric: console: ibsim is not running (%s has no reader)", consoleFIFO)
		}
		return fmt.Errorf("simfabric: console: %w", err)
	}
	defer unix.Close(fd)
	msg := []byte(lines)
	for tries := 0; ; tries++ {
		// One write of less than PIPE_BUF bytes is atomic.
		n, err := unix.Write(fd, msg)
		if err == nil && n == len(msg) {
			return nil
		}
		if !errors.Is(err, unix.EAGAIN) || tries > 500 {
			return fmt.Errorf("simfabric: console: writing %q: %v", lines, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readReply reads the console output from out's offset: past the echo of
// marker, then up to the next prompt, calling line for every line of the
// reply. It returns the offset after the last byte it read.
func (f *Fabric) readReply(ctx context.Context, out *os.File, marker []byte, line func([]byte) error) (int64, error) {
	pos, err := out.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	sc := replyScanner{marker: append(marker, prompt...)}
	buf := make([]byte, 1<<20)
	pause := time.Millisecond
	for {
		n, err := out.Read(buf)
		if n > 0 {
			pos += int64(n)
			pause = time.Millisecond
			done, lerr := sc.feed(buf[:n], line)
			if lerr != nil || done {
				return pos, lerr
			}
			continue
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if err := f.ibsim.exited(); err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("no prompt from ibsim: %w", ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// prompt is what ibsim prints after every console command.
var prompt = []byte("sim> ")

// replyScanner splits a console reply into lines and finds the prompt that
// ends it: "sim> " at the start of a line, or at the end of the output
// after a reply whose last line has no newline. With a marker, it first
// skips everything up to and including the marker.
type replyScanner struct {
	marker  []byte // still to find; nil once found (or when none)
	partial []byte // an unterminated line, or the tail that may start the marker
}

// feed takes the next chunk of output and reports whether the prompt was
// in it. Output after the prompt is ignored: nothing comes until the next
// command, which waits for the console lock.
func (s *replyScanner) feed(chunk []byte, line func([]byte) error) (bool, error) {
	data := append(s.partial, chunk...)
	s.partial = nil
	if s.marker != nil {
		i := bytes.Index(data, s.marker)
		if i < 0 {
			keep := max(0, len(data)-len(s.marker)+1)
			s.partial = append([]byte(nil), data[keep:]...)
			return false, nil
		}
		data = data[i+len(s.marker):]
		s.marker = nil
	}
	for len(data) > 0 {
		if bytes.HasPrefix(data, prompt) {
			return true, nil
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if bytes.HasSuffix(data, prompt) {
				return true, line(data[:len(data)-len(prompt)])
			}
			s.partial = append([]byte(nil), data...)
			return false, nil
		}
		if err := line(data[:i]); err != nil {
			return false, err
		}
		data = data[i+1:]
	}
	return false, nil
}
