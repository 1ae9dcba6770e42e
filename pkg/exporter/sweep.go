package exporter

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// DeviceResult is what a sweep read of one device.
type DeviceResult struct {
	Device *Device
	// Ports are the readings of the device's ports, Ports[i] of
	// Device.Ports[i]; a port not read has Read false (Err says why).
	// Nil when no port was read.
	Ports []PortReading
	// RcvErrDetails are the ports' PortRcvErrorDetails, RcvErrDetails[i]
	// of Device.Ports[i], where the Sweeper reads them for the device's
	// type (nil entries where not read); nil when none was read.
	RcvErrDetails []*mad.PortRcvErrorDetails
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
	X *madrpc.Transactor
	// Base ends every sweep (the exporter stopping).
	Base context.Context
	// SwitchRcvErrDetails and HCARcvErrDetails read each port's
	// PortRcvErrorDetails too, at the switches or at the CAs
	// (infiniband_exporter's --collector.switch.rcv-err-details and
	// --collector.hca.rcv-err-details).
	SwitchRcvErrDetails, HCARcvErrDetails bool

	mu  sync.Mutex
	cur *sweep
	// prefetch is the Prefetch the next sweep takes readings from.
	prefetch *Prefetch
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
	pre := s.prefetch // s.mu is held
	s.prefetch = nil
	// As many devices are read at once as the transactor has MADs in
	// flight, each device's queries one after another, as ibqueryerrors
	// reads nodes: the window stays full, a switch's PMA sees one query
	// at a time, and a fixed set of workers does it.
	workers := min(len(devices), max(1, s.X.Window()))
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			for sctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(devices) {
					return
				}
				r, ok := (*DeviceResult)(nil), false
				if pre != nil {
					r, ok = pre.take(sctx, devices[i])
				}
				if !ok {
					r = s.device(sctx, devices[i])
				}
				sw.mu.Lock()
				sw.results[i] = r
				sw.mu.Unlock()
			}
		}()
	}
	go func() {
		wg.Wait()
		cancel()
		close(sw.done)
	}()
	return sw
}

// device reads one device: its PMA's capabilities (once per topology),
// then its ports one after another. A query that times out ends the
// device's reading, so a dead switch costs one query's timeout, not one
// per port; a port whose PMA answers with an error is left out and the
// others are read.
func (s *Sweeper) device(ctx context.Context, d *Device) *DeviceResult {
	start := time.Now()
	r := &DeviceResult{Device: d}
	defer func() {
		r.Duration = time.Since(start)
		if r.Err != nil && ctx.Err() != nil && errors.Is(r.Err, ctx.Err()) {
			r.Timeout = true
		}
	}()
	path := mad.LIDPath(d.LID)
	caps := d.caps.Load()
	if caps == nil {
		c, err := madrpc.NewPMA(s.X, path).Capabilities(ctx, d.capPort())
		if err != nil {
			r.Err = err
			return r
		}
		d.caps.Store(&c)
		caps = &c
	}
	var ports []PortReading
	for i, p := range d.Ports {
		pr, err := readPort(ctx, s.X, path, *caps, p.Num)
		if err != nil {
			if r.Err == nil {
				r.Err = err
			}
			var te *madrpc.TimeoutError
			if errors.As(err, &te) || ctx.Err() != nil {
				break
			}
			continue
		}
		if ports == nil {
			ports = make([]PortReading, len(d.Ports))
		}
		pr.Read = true
		ports[i] = pr
		if !s.rcvErrDetails(d) {
			continue
		}
		det := new(mad.PortRcvErrorDetails)
		if _, err := madrpc.NewPMA(s.X, path).Get(ctx, det, p.Num); err != nil {
			if r.Err == nil {
				r.Err = err
			}
			var te *madrpc.TimeoutError
			if errors.As(err, &te) || ctx.Err() != nil {
				break
			}
			continue
		}
		if r.RcvErrDetails == nil {
			r.RcvErrDetails = make([]*mad.PortRcvErrorDetails, len(d.Ports))
		}
		r.RcvErrDetails[i] = det
	}
	r.Ports = ports
	return r
}

// rcvErrDetails reports whether d's ports' PortRcvErrorDetails are read.
func (s *Sweeper) rcvErrDetails(d *Device) bool {
	if d.Type == mad.NodeTypeSwitch {
		return s.SwitchRcvErrDetails
	}
	return s.HCARcvErrDetails
}
