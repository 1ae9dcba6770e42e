package exporter

import (
	"bufio"
	"bytes"
	"cmp"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// family is one metric family of a scrape: each calls emit with every
// sample's label values (in the family's label order) and value. emit
// does not keep the slice, so each fills one again and again.
type family struct {
	desc *desc
	each func(m *Metrics, emit func(values []string, v float64))
}

// families are every family the exporter writes, sorted by name (the
// order of Gather and of the text exposition).
var families = sync.OnceValue(func() []family {
	fs := declaredFamilies()
	slices.SortFunc(fs, func(a, b family) int { return cmp.Compare(a.desc.name, b.desc.name) })
	return fs
})

// declaredFamilies are every family the exporter writes.
func declaredFamilies() []family {
	var fs []family
	for _, sw := range []bool{true, false} {
		dd := descs().hcaDescs
		if sw {
			dd = descs().switchDescs
		}
		t := typeOf(sw)
		fs = append(fs,
			family{dd.info, func(m *Metrics, emit func([]string, float64)) {
				vals := make([]string, 3)
				m.eachDevice(t, func(i int) {
					l := &m.view.labels[i]
					vals[0], vals[1], vals[2] = l.guid, l.name, l.lid
					emit(vals, 1)
				})
			}},
			family{dd.duration, deviceResultFamily(t, func(r *DeviceResult) float64 { return r.Duration.Seconds() })},
			family{dd.timeout, deviceResultFamily(t, func(r *DeviceResult) float64 { return b2f(r.Timeout) })},
			family{dd.error, deviceResultFamily(t, func(r *DeviceResult) float64 { return b2f(!r.Timeout && r.Err != nil) })},
			family{dd.rate, rateFamily(t, false)},
			family{dd.rawRate, rateFamily(t, true)},
			family{dd.uplink, func(m *Metrics, emit func([]string, float64)) {
				vals := make([]string, 8)
				m.eachRow(t, func(r *row) {
					vals[0], vals[1], vals[2] = m.view.labels[r.dev].guid, r.port, m.view.labels[r.dev].name
					vals[3], vals[4], vals[5] = r.uplink, r.uplinkGUID, typeCode(m.view.port(r).Remote.Node.Type)
					vals[6], vals[7] = r.uplinkPort, r.uplinkLID
					emit(vals, 1)
				}, func(r *row) bool { return m.view.port(r).Remote != nil })
			}},
		)
		for n := range counters {
			fs = append(fs, family{dd.counters[n], counterFamily(t, n)})
		}
		for n := range rcvErrCounters {
			fs = append(fs, family{dd.rcvErr[n], rcvErrFamily(t, n)})
		}
	}
	fs = append(fs,
		family{descs().portInfo, func(m *Metrics, emit func([]string, float64)) {
			if m.view == nil {
				return
			}
			vals := make([]string, 7)
			for i := range m.view.rows {
				r := &m.view.rows[i]
				d, l := m.view.devices[r.dev], &m.view.labels[r.dev]
				vals[0], vals[1], vals[2], vals[3] = l.guid, r.port, typeCode(d.Type), l.nodeGUID
				vals[4], vals[5], vals[6] = l.lid, l.name, l.desc
				emit(vals, 1)
			}
		}},
		family{descs().linkState, linkFamily(func(r *row, pi *mad.PortInfo) (float64, bool) { return float64(pi.LinkState), true })},
		family{descs().physState, linkFamily(func(r *row, pi *mad.PortInfo) (float64, bool) { return float64(pi.PhysLinkState), true })},
		family{descs().widthActive, linkFamily(func(r *row, pi *mad.PortInfo) (float64, bool) {
			n := lanes(uint8(pi.LinkWidthActive))
			return float64(n), n > 0
		})},
		family{descs().widthEnabled, portFamily(func(m *Metrics, r *row) (float64, bool) {
			n := enabledLanes(m.view.port(r))
			return float64(n), n > 0
		})},
		family{descs().speedActive, portFamily(func(m *Metrics, r *row) (float64, bool) {
			rate, ok := activeRate(m.view.port(r))
			return rate.raw * 1e9 / 8, ok
		})},
		family{descs().speedEnabled, portFamily(func(m *Metrics, r *row) (float64, bool) {
			rate, ok := enabledRate(m.view.port(r))
			return rate.raw * 1e9 / 8, ok
		})},
	)
	for _, d := range []*desc{descs().collectDuration, descs().collectErrors, descs().collectTimeouts, descs().lastExecution, descs().saturated} {
		fs = append(fs, family{d, func(m *Metrics, emit func([]string, float64)) {
			for i := range m.misc {
				if s := &m.misc[i]; s.desc == d {
					emit(s.values, s.value)
				}
			}
		}})
	}
	return fs
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// eachDevice calls f with the index of every device of type t, in guid
// label order.
func (m *Metrics) eachDevice(t mad.NodeType, f func(i int)) {
	if m.view == nil {
		return
	}
	for _, i := range m.view.byGUID {
		if m.view.devices[i].Type == t {
			f(int(i))
		}
	}
}

// eachRow calls f with every port of a device of type t (of any type
// when t is 0) that keep accepts, in (guid, port) label order.
func (m *Metrics) eachRow(t mad.NodeType, f func(r *row), keep func(r *row) bool) {
	if m.view == nil {
		return
	}
	for i := range m.view.rows {
		r := &m.view.rows[i]
		if (t == 0 || m.view.devices[r.dev].Type == t) && (keep == nil || keep(r)) {
			f(r)
		}
	}
}

// deviceResultFamily is a (guid, collector) family of each device of
// type t's sweep result.
func deviceResultFamily(t mad.NodeType, value func(r *DeviceResult) float64) func(m *Metrics, emit func([]string, float64)) {
	return func(m *Metrics, emit func([]string, float64)) {
		name := m.c.collectorName("hca")
		if t == mad.NodeTypeSwitch {
			name = m.c.collectorName("switch")
		}
		vals := make([]string, 2)
		m.eachDevice(t, func(i int) {
			vals[0], vals[1] = m.view.labels[i].guid, name
			emit(vals, value(m.results[i]))
		})
	}
}

// counterFamily is counter n of the ports of devices of type t that
// the sweep read it of.
func counterFamily(t mad.NodeType, n int) func(m *Metrics, emit func([]string, float64)) {
	scale := 1.0
	if counters[n].kind == kindData {
		scale = 4
	}
	return func(m *Metrics, emit func([]string, float64)) {
		if t == mad.NodeTypeSwitch && m.c.NoSwitchCounters || t != mad.NodeTypeSwitch && m.c.NoHCACounters {
			return
		}
		vals := make([]string, 2)
		m.eachRow(t, func(r *row) {
			ports := m.results[r.dev].Ports
			if ports == nil {
				return
			}
			pr := &ports[r.idx]
			if !pr.Read || pr.Present&(1<<n) == 0 {
				return
			}
			vals[0], vals[1] = m.view.labels[r.dev].guid, r.port
			emit(vals, float64(pr.Values[n])*scale)
		}, nil)
	}
}

// rcvErrFamily is PortRcvErrorDetails' counter n of the ports of devices
// of type t that the sweep read it of.
func rcvErrFamily(t mad.NodeType, n int) func(m *Metrics, emit func([]string, float64)) {
	return func(m *Metrics, emit func([]string, float64)) {
		vals := make([]string, 2)
		m.eachRow(t, func(r *row) {
			dets := m.results[r.dev].RcvErrDetails
			if dets == nil || dets[r.idx] == nil {
				return
			}
			vals[0], vals[1] = m.view.labels[r.dev].guid, r.port
			emit(vals, float64(rcvErrCounters[n].value(dets[r.idx])))
		}, nil)
	}
}

// rateFamily is infiniband_exporter's rate (raw: signaling, else
// effective) of the links of devices of type t: (guid, port) at a
// switch, (guid) at a CA port.
func rateFamily(t mad.NodeType, raw bool) func(m *Metrics, emit func([]string, float64)) {
	return func(m *Metrics, emit func([]string, float64)) {
		vals := make([]string, 2)
		if t != mad.NodeTypeSwitch {
			vals = vals[:1]
		}
		m.eachRow(t, func(r *row) {
			p := m.view.port(r)
			rate, ok := activeRate(p)
			width := 0
			if p.Info != nil {
				width = lanes(uint8(p.Info.LinkWidthActive))
			}
			if !ok || width == 0 {
				return
			}
			v := rate.effective
			if raw {
				v = rate.raw
			}
			vals[0] = m.view.labels[r.dev].guid
			if len(vals) > 1 {
				vals[1] = r.port
			}
			emit(vals, float64(width)*v*1e9/8)
		}, nil)
	}
}

// portFamily is a (guid, port) family of every port with a PortInfo that
// value gives a value of.
func portFamily(value func(m *Metrics, r *row) (float64, bool)) func(m *Metrics, emit func([]string, float64)) {
	return func(m *Metrics, emit func([]string, float64)) {
		vals := make([]string, 2)
		m.eachRow(0, func(r *row) {
			if m.view.port(r).Info == nil {
				return
			}
			if v, ok := value(m, r); ok {
				vals[0], vals[1] = m.view.labels[r.dev].guid, r.port
				emit(vals, v)
			}
		}, nil)
	}
}

// linkFamily is portFamily of a PortInfo field.
func linkFamily(value func(r *row, pi *mad.PortInfo) (float64, bool)) func(m *Metrics, emit func([]string, float64)) {
	return portFamily(func(m *Metrics, r *row) (float64, bool) { return value(r, m.view.port(r).Info) })
}

// Describe sends the Desc of every family a scrape may hold: the
// Metrics are a prometheus.Collector of one scrape's metrics.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families() {
		ch <- f.desc.prom
	}
}

// Collect sends the scrape's metrics as constant metrics.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, f := range families() {
		f.each(m, func(values []string, v float64) { ch <- f.desc.metric(v, values...) })
	}
}

// WriteTo writes the metrics in Prometheus' text exposition format
// (0.0.4) with client_golang's expfmt: families by name, samples by
// their label values, as Gather orders them. One goroutine gathers the
// families in order (each takes its label pairs from the last one of the
// same labels) while the last one gathered is encoded, a part of
// encodeChunk metrics at a time, on as many goroutines as the Go
// scheduler has processors; the parts are written in order.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	type gathered struct {
		mf  *dto.MetricFamily
		buf *familyBuffers
	}
	// One family waits gathered while one is encoded and the next is
	// gathered: each holds its metrics, so every family more ahead is
	// fresh memory for the kernel to clear (docs/bench.md, the
	// exporter's scrape).
	const ahead = 1
	mfs := make(chan gathered, ahead)
	// Written families' buffers, for the families gathered after them.
	free := make(chan *familyBuffers, ahead+2)
	go func() {
		defer close(mfs)
		shared := map[string]*labelSets{}
		for _, f := range families() {
			var buf *familyBuffers
			select {
			case buf = <-free:
			default:
				buf = &familyBuffers{}
			}
			if mf := m.gatherFamily(f, shared, buf); mf != nil {
				mfs <- gathered{mf, buf}
			} else {
				select {
				case free <- buf:
				default:
				}
			}
		}
	}()
	encoders := max(1, runtime.GOMAXPROCS(0))
	// window chunks are encoded or wait to be written at once; their
	// texts are reused.
	window := 2 * encoders
	work := make(chan *chunk, window)
	for range encoders {
		go func() {
			for c := range work {
				c.encode()
			}
		}()
	}
	defer close(work)
	spare := make([]*chunk, 0, window)
	pending := make([]*chunk, 0, window) // in the order they are written
	var n int64
	var err error
	// flush waits for the first pending chunk and writes it, unless
	// writing has failed; then the chunk is free again.
	flush := func() {
		c := pending[0]
		pending = append(pending[:0], pending[1:]...)
		<-c.done
		if err == nil {
			err = c.err
		}
		if err == nil {
			var k int
			k, err = w.Write(c.text.Bytes())
			n += int64(k)
		}
		*c = chunk{text: c.text}
		spare = append(spare, c)
	}
	for g := range mfs {
		all := g.mf.Metric
		for at := 0; at < len(all); at += encodeChunk {
			if len(pending) == window {
				flush()
			}
			var c *chunk
			if k := len(spare); k > 0 {
				c, spare = spare[k-1], spare[:k-1]
			} else {
				c = &chunk{}
			}
			end := min(at+encodeChunk, len(all))
			c.mf = &dto.MetricFamily{Name: g.mf.Name, Type: g.mf.Type, Metric: all[at:end]}
			c.head = at == 0
			if c.head {
				c.mf.Help = g.mf.Help
			}
			c.done = make(chan struct{})
			pending = append(pending, c)
			work <- c
		}
		// The family is written before the next is taken, so that its
		// buffers are free for the one gathered after that: no more
		// families are held at once than with one encoder.
		for len(pending) > 0 {
			flush()
		}
		select {
		case free <- g.buf:
		default:
		}
	}
	return n, err
}

// encodeChunk is how many of a family's metrics WriteTo encodes as one
// part: about 100 to 250 KB of text.
const encodeChunk = 1024

// chunk is a part of a family that WriteTo encodes: its first part
// (head) with the family's HELP and TYPE lines, the others without.
type chunk struct {
	mf   *dto.MetricFamily
	head bool
	text bytes.Buffer
	err  error
	done chan struct{}
}

// encode writes the chunk's text and closes done. expfmt writes a
// family's TYPE line whatever it is given, so a part after the first
// drops its first line (HELP is written only where Help is set).
func (c *chunk) encode() {
	defer close(c.done)
	c.text.Reset()
	if _, c.err = expfmt.MetricFamilyToText(&c.text, c.mf); c.err != nil || c.head {
		return
	}
	text := c.text.Bytes()
	line := bytes.IndexByte(text, '\n')
	c.text.Next(line + 1)
}

// WriteText writes what g gathers in Prometheus' text exposition format
// (0.0.4), as a node_exporter textfile collector reads it. A gathering
// error is returned after what was gathered is written.
func WriteText(w io.Writer, g prometheus.Gatherer) (int64, error) {
	mfs, gerr := g.Gather()
	bw := bufio.NewWriterSize(w, 64<<10)
	var n int64
	for _, mf := range mfs {
		k, err := expfmt.MetricFamilyToText(bw, mf)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	if err := bw.Flush(); err != nil {
		return n, err
	}
	return n, gerr
}
