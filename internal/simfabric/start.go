package simfabric

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startIbsim runs ibsim with its console on a FIFO, and waits for its first
// prompt (the net file is parsed) and its control socket (clients may
// connect: ibsim binds it just after printing the prompt).
func (f *Fabric) startIbsim(ctx context.Context, limits []string, detach bool) error {
	bin, err := lookPath("ibsim")
	if err != nil {
		return err
	}
	fifo := f.path(consoleFIFO)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return fmt.Errorf("making console FIFO: %w", err)
	}
	// Open read-write, blocking: ibsim then holds a writer itself, so it
	// never reads end of file (its console loop would spin on it), and a
	// writer's open never blocks while ibsim runs.
	fd, err := unix.Open(fifo, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening console FIFO: %w", err)
	}
	stdin := os.NewFile(uintptr(fd), fifo)
	defer stdin.Close()
	stdout, err := os.Create(f.path(consoleOut))
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := os.Create(f.path(ibsimLog))
	if err != nil {
		return err
	}
	defer stderr.Close()

	args := append([]string{"-s"}, limits...)
	args = append(args, f.netPath)
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(f.netPath)
	cmd.Env = childEnv("IBSIM_SOCKNAME=" + f.sockName)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = procAttr(detach)
	if f.ibsim, err = startProc("ibsim", cmd); err != nil {
		return err
	}
	if err := f.writeState(); err != nil {
		return err
	}

	out := &logWatch{path: f.path(consoleOut)}
	if err := f.poll(ctx, "ibsim to read the net file", func() (bool, error) {
		return out.find([]byte("sim> "))
	}); err != nil {
		return err
	}
	// /proc/net/unix shows an abstract name with a leading '@' and its
	// NUL padding as '@' too: "@<sockname>:ctl@".
	ctl := "@" + f.sockName + ":ctl"
	return f.poll(ctx, "ibsim's control socket", func() (bool, error) {
		tab, err := os.ReadFile("/proc/net/unix")
		return bytes.Contains(tab, []byte(ctl+"@")) || bytes.Contains(tab, []byte(ctl+"\n")), err
	})
}

// startOpenSM runs opensm under the shim (and the RMPP layer, which sends
// its SA tables segment by segment) and waits for "SUBNET UP".
func (f *Fabric) startOpenSM(ctx context.Context, opts Options) error {
	bin, err := lookPath("opensm")
	if err != nil {
		return err
	}
	out, err := os.Create(f.path(osmOut))
	if err != nil {
		return err
	}
	defer out.Close()
	// -d2: log "SUBNET UP" at once; -s 0: no periodic sweeps, so no
	// background MADs while a test times something (traps still trigger
	// sweeps, which fault injection relies on).
	args := []string{"-f", f.path(osmLog), "-d2", "-s", "0"}
	if opts.RoutingEngine != "" {
		args = append(args, "-R", opts.RoutingEngine)
	}
	args = append(args, opts.OpenSMArgs...)
	preload, err := Preload()
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = f.dir // the shim leaves sys-<pid> in the working directory
	env := []string{"LD_PRELOAD=" + preload, "OSM_TMP_DIR=" + f.dir, "OSM_CACHE_DIR=" + f.dir}
	cmd.Env = childEnv(append(env, f.Env(opts.SMNode)...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = procAttr(opts.Detach)
	if f.opensm, err = startProc("opensm", cmd); err != nil {
		return err
	}
	if err := f.writeState(); err != nil {
		return err
	}
	log := &logWatch{path: f.path(osmLog)}
	master := false
	err = f.poll(ctx, "opensm's SUBNET UP", func() (bool, error) {
		data, err := log.read()
		master = master || bytes.Contains(data, []byte("Entering MASTER state"))
		return bytes.Contains(data, []byte("SUBNET UP")), err
	})
	if err != nil && !master {
		return fmt.Errorf("%w (opensm never logged \"Entering MASTER state\")", err)
	}
	return err
}

// waitPorts polls ibsim's Dump until every cabled port is ready, and, when
// wantLinked is not negative, ibsim has as many cabled ports as that.
// Dump's cost grows with the fabric, so the pause between two Dumps is
// twice the last one's time, at least 200 ms.
func (f *Fabric) waitPorts(ctx context.Context, wantLinked int) error {
	for {
		t := time.Now()
		ports, err := f.Dump(ctx)
		if err == nil {
			err = checkReady(ports, wantLinked)
			if err == nil {
				return nil
			}
		}
		pause := max(200*time.Millisecond, 2*time.Since(t))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-time.After(pause):
		}
	}
}

// poll calls done every few milliseconds (backing off to 250 ms) until it
// reports true, fails, ctx ends, or ibsim or opensm exits.
func (f *Fabric) poll(ctx context.Context, what string, done func() (bool, error)) error {
	pause := 5 * time.Millisecond
	for {
		ok, err := done()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		for _, p := range []*proc{f.ibsim, f.opensm} {
			if err := p.exited(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// logWatch reads what a growing log file gained since the last read.
type logWatch struct {
	path string
	off  int64
	tail []byte // an unterminated last line, kept for the next read
}

// read returns the complete lines appended since the last call.
func (w *logWatch) read() ([]byte, error) {
	fh, err := os.Open(w.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || st.Size() <= w.off {
		return nil, err
	}
	buf := make([]byte, st.Size()-w.off)
	n, err := fh.ReadAt(buf, w.off)
	if n == 0 {
		return nil, err
	}
	w.off += int64(n)
	data := append(w.tail, buf[:n]...)
	i := bytes.LastIndexByte(data, '\n')
	w.tail = append([]byte(nil), data[i+1:]...)
	return data[:i+1], nil
}

// find reports whether pattern appears in the file, also in an unterminated
// last line (a prompt has no newline).
func (w *logWatch) find(pattern []byte) (bool, error) {
	data, err := w.read()
	if err != nil {
		return false, err
	}
	return bytes.Contains(data, pattern) || bytes.Contains(w.tail, pattern), nil
}

// fileSize returns the file's size, 0 when it does not exist.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// tailLines is how much of each log an error message quotes.
const tailLines = 15

// ibsimNoise is a warning ibsim prints for every port line without
// ibnetdiscover's "lid ... 4xSDR" comment: harmless, and it would fill the
// tail of ibsim's log.
const ibsimNoise = "cannot parse remote lid and connection type"

// logTails returns the last lines of ibsim's and opensm's logs, for an
// error message; "" when there are none.
func (f *Fabric) logTails() string {
	if f.dir == "" {
		return ""
	}
	var b strings.Builder
	for _, name := range []string{ibsimLog, consoleOut, osmLog, osmOut} {
		lines := lastLines(f.path(name), tailLines, ibsimNoise)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n--- last lines of %s ---", name)
		for _, l := range lines {
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}

// lastLines returns up to n last lines of a file that do not contain skip,
// reading at most its last 64 KiB.
func lastLines(path string, n int, skip string) []string {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil
	}
	off := max(0, st.Size()-64<<10)
	buf := make([]byte, st.Size()-off)
	k, _ := fh.ReadAt(buf, off)
	var keep []string
	for _, l := range strings.Split(string(bytes.Trim(buf[:k], "\x00")), "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" && !strings.Contains(l, skip) {
			keep = append(keep, l)
		}
	}
	if off > 0 && len(keep) > 0 {
		keep = keep[1:] // probably cut
	}
	return keep[max(0, len(keep)-n):]
}

// killGroup is the runners' cmd.Cancel: SIGKILL to the process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
