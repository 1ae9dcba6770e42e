package exporter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
)

// DeviceResult is what a sweep read of one device.
type DeviceResult struct {
	Device *Device
	// Ports are the ports read, in the device's order; a port whose
	// queries failed is left out (Err says why).
	Ports []PortReading
	// Duration is how long the device's queries took.
	Duration time.Duration
	// Err is the first query that failed; Timeout is set when the
	// scrape's time ran out before the device answered.
	Err     error
	Timeout bool
}

// Sweeper reads every device's counters through one transactor. Sweeps
// asked for while one runs on the same topology share it.
type Sweeper struct {
	X *mad.Transactor
	// Base ends every sweep (the exporter stopping).
	Base context.Context

	mu  sync.Mutex
	cur *sweep
}

// sweep is one pass over a topology's devices.
type sweep struct {
	devices []*Device
	done    chan struct{}
	mu      sync.Mutex
	results []*DeviceResult
}

// Sweep reads the counters of devices, or joins the sweep of the same
// devices that is running. It returns when the sweep is done or ctx ends,
// whichever comes first, with a result for every device: those that had
// not answered when ctx ended are marked Timeout. A sweep started here
// ends at ctx's deadline, or when Base ends, not when ctx is cancelled
// otherwise: scrapes that joined it still want it.
func (s *Sweeper) Sweep(ctx context.Context, devices []*Device) []*DeviceResult {
	s.mu.Lock()
	sw := s.cur
	if sw == nil || !sameDevices(sw.devices, devices) || sw.finished() {
		sw = s.start(ctx, devices)
		s.cur = sw
	}
	s.mu.Unlock()
	select {
	case <-sw.done:
	case <-ctx.Done():
	}
	return sw.snapshot()
}

func sameDevices(a, b []*Device) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (sw *sweep) finished() bool {
	select {
	case <-sw.done:
		return true
	default:
		return false
	}
}

// snapshot returns the results so far; a device not done is a timeout.
func (sw *sweep) snapshot() []*DeviceResult {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	out := make([]*DeviceResult, len(sw.devices))
	for i, d := range sw.devices {
		if r := sw.results[i]; r != nil {
			out[i] = r
		} else {
			out[i] = &DeviceResult{Device: d, Timeout: true, Err: context.DeadlineExceeded}
		}
	}
	return out
}

func (s *Sweeper) start(ctx context.Context, devices []*Device) *sweep {
	base := s.Base
	if base == nil {
		base = context.Background()
	}
	sctx, cancel := context.WithCancel(base)
	if dl, ok := ctx.Deadline(); ok {
		sctx, cancel = context.WithDeadline(base, dl)
	}
	sw := &sweep{devices: devices, done: make(chan struct{}), results: make([]*DeviceResult, len(devices))}
	go func() {
		defer cancel()
		defer close(sw.done)
		var wg sync.WaitGroup
		// The transactor bounds the MADs in flight; this bounds the
		// goroutines waiting for it.
		sem := make(chan struct{}, 2*max(1, s.X.Window()))
		for i, d := range devices {
			select {
			case sem <- struct{}{}:
			case <-sctx.Done():
				wg.Wait()
				return
			}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				r := s.device(sctx, d)
				sw.mu.Lock()
				sw.results[i] = r
				sw.mu.Unlock()
			}()
		}
		wg.Wait()
	}()
	return sw
}

// device reads one device: its PMA's capabilities (once per topology),
// its first port, then the others at once. A device whose first port
// does not answer is not asked for the others, so a dead switch costs
// one query's timeout, not one per port.
func (s *Sweeper) device(ctx context.Context, d *Device) *DeviceResult {
	start := time.Now()
	r := &DeviceResult{Device: d}
	defer func() {
		r.Duration = time.Since(start)
		if r.Err != nil && ctx.Err() != nil && errors.Is(r.Err, ctx.Err()) {
			r.Timeout = true
		}
	}()
	pma := mad.NewPMA(s.X, mad.LIDPath(d.LID))
	caps := d.caps.Load()
	if caps == nil {
		c, err := pma.Capabilities(ctx, d.capPort())
		if err != nil {
			r.Err = err
			return r
		}
		d.caps.Store(&c)
		caps = &c
	}
	first, err := readPort(ctx, pma, *caps, d.Ports[0].Num)
	if err != nil {
		r.Err = err
		return r
	}
	r.Ports = make([]PortReading, len(d.Ports))
	r.Ports[0] = first
	errs := make([]error, len(d.Ports))
	var wg sync.WaitGroup
	for i, p := range d.Ports[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Ports[i+1], errs[i+1] = readPort(ctx, pma, *caps, p.Num)
		}()
	}
	wg.Wait()
	kept := r.Ports[:0]
	for i, pr := range r.Ports {
		if errs[i] != nil {
			if r.Err == nil {
				r.Err = errs[i]
			}
			continue
		}
		kept = append(kept, pr)
	}
	r.Ports = kept
	return r
}
