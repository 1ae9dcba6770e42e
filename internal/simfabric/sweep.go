package simfabric

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// sweepMark is the file that holds opensm.log's size before the first
// link change not yet waited for, so that WaitActive works across
// processes (simfab console, then simfab wait).
const sweepMark = "sweep.mark"

// markSweep records mark unless an earlier link change is still pending.
func (f *Fabric) markSweep(mark int64) {
	f.sweepMu.Lock()
	defer f.sweepMu.Unlock()
	if _, err := os.Stat(f.path(sweepMark)); err == nil {
		return
	}
	_ = os.WriteFile(f.path(sweepMark), []byte(strconv.FormatInt(mark, 10)), 0o644)
}

// What opensm logs (at its default level) that WaitActive looks for.
var (
	osmSubnetUp = []byte("SUBNET UP")
	osmTrap     = []byte("Received Generic Notice")
)

// ErrNoSM is wrapped by WaitActive's error on a fabric started without a
// subnet manager, whose ports never become Active.
var ErrNoSM = errors.New("no subnet manager")

// WaitActive waits until the fabric has settled after link changes: every
// cabled port Active, every end port with a LID, no switch with a port
// change that opensm has not swept for, and, when Unlink, Link, ReLink or
// Clear ran since the last wait (in any process) and opensm took a trap
// for it, opensm's "SUBNET UP" after that trap.
//
// ibsim's Dump is the ground truth: a link change on a switch sets its
// PortStateChange bit, and only opensm's heavy sweep clears it. A command
// that changed nothing (a ReLink with nothing to relink, a Clear of a free
// port) leaves no bit set and sends no trap, so WaitActive returns at
// once. opensm ignores the eleventh trap of a kind from a switch within 5
// seconds of the last (its trap aging), and ibsim sends no trap when its
// route to the SM is the cut link; when the fabric has not settled within
// a grace period (twice opensm's first sweep, at least a second),
// WaitActive makes opensm sweep with SIGHUP, as often as it takes.
func (f *Fabric) WaitActive(ctx context.Context) error {
	if f.opensm.PID() == 0 {
		return fmt.Errorf("simfabric: waiting for active ports: %w (the fabric was started with NoSM)", ErrNoSM)
	}
	f.sweepMu.Lock()
	mark, err := os.ReadFile(f.path(sweepMark))
	f.sweepMu.Unlock()
	w := sweepWait{grace: max(time.Second, 2*f.timing.SubnetUp)}
	if err == nil {
		from, _ := strconv.ParseInt(string(mark), 10, 64)
		w.expect(f.path(osmLog), from)
	}
	if err := f.settle(ctx, &w); err != nil {
		return fmt.Errorf("simfabric: %w%s", err, f.logTails())
	}
	if mark != nil {
		f.sweepMu.Lock()
		if again, err := os.ReadFile(f.path(sweepMark)); err == nil && bytes.Equal(again, mark) {
			os.Remove(f.path(sweepMark))
		}
		f.sweepMu.Unlock()
	}
	return nil
}

// sweepWait is WaitActive's view of opensm: whether a sweep is owed, and
// what opensm logged since the point it is owed from.
type sweepWait struct {
	grace time.Duration
	log   *logWatch // opensm.log from where a sweep is owed; nil when none is
	trap  bool      // opensm took a trap since then
	up    bool      // and logged SUBNET UP since then
	kicks int       // SIGHUPs sent
}

// expect owes a sweep that logs SUBNET UP after offset from of the log.
func (w *sweepWait) expect(path string, from int64) {
	w.log = &logWatch{path: path, off: from}
	w.trap, w.up = false, false
}

// scan reads what opensm logged since the last scan.
func (w *sweepWait) scan() error {
	if w.log == nil || w.up {
		return nil
	}
	data, err := w.log.read()
	w.trap = w.trap || bytes.Contains(data, osmTrap)
	w.up = w.up || bytes.Contains(data, osmSubnetUp)
	return err
}

// settled reports whether the fabric is settled, given a Dump's parse: no
// switch's change unswept, every cabled port ready, and no sweep owed for
// which opensm took a trap but has not logged SUBNET UP. With no trap and
// no bit set, the change needed no sweep, and none is coming.
func (w *sweepWait) settled(d *dumpParser) bool {
	if len(d.changed) > 0 || checkReady(d.ports, -1) != nil {
		return false
	}
	return w.log == nil || w.up || !w.trap
}

// settle polls ibsim's Dump until w says the fabric is settled, making
// opensm sweep when it has not settled for w.grace.
func (f *Fabric) settle(ctx context.Context, w *sweepWait) error {
	pause := 10 * time.Millisecond
	kickAt := time.Now().Add(w.grace)
	for {
		// The log's size before the Dump: a bit the Dump shows set is
		// cleared by a sweep that logs SUBNET UP after this offset.
		size := fileSize(f.path(osmLog))
		if err := w.scan(); err != nil {
			return fmt.Errorf("reading opensm's log: %w", err)
		}
		t := time.Now()
		d, err := f.dump(ctx)
		if err != nil {
			return fmt.Errorf("waiting for active ports: %w", err)
		}
		if w.settled(d) {
			return nil
		}
		if len(d.changed) > 0 && (w.log == nil || w.up) {
			w.expect(f.path(osmLog), size)
		}
		if time.Now().After(kickAt) {
			if err := f.kickSM(); err != nil {
				return err
			}
			w.expect(f.path(osmLog), fileSize(f.path(osmLog)))
			w.trap = true // SIGHUP owes a sweep as a trap does
			w.kicks++
			kickAt = time.Now().Add(w.grace)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the fabric to settle (%s): %w", w.why(d), ctx.Err())
		case <-time.After(max(pause, 2*time.Since(t))):
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// why says what keeps the fabric from settling, for an error message.
func (w *sweepWait) why(d *dumpParser) string {
	var s string
	switch {
	case len(d.changed) > 0:
		s = fmt.Sprintf("opensm has not swept for the port changes of %d switches, %s first", len(d.changed), d.changed[0])
	case checkReady(d.ports, -1) != nil:
		s = checkReady(d.ports, -1).Error()
	default:
		s = "no SUBNET UP from opensm's sweep"
	}
	if w.kicks > 0 {
		s += fmt.Sprintf("; opensm was sent SIGHUP %d times", w.kicks)
	}
	return s
}

// kickSM sends opensm SIGHUP, which makes it run a heavy sweep.
func (f *Fabric) kickSM() error {
	if err := f.opensm.exited(); err != nil {
		return err
	}
	if err := syscall.Kill(f.opensm.pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("making opensm sweep: %w", err)
	}
	return nil
}
