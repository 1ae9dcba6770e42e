package exporter

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Gather returns the scrape's metrics in client_golang's data model, as
// a registry holding m would (families by name, each family's metrics by
// their label values in label-name order, label pairs by name), so that
// promhttp and expfmt encode them. It builds them directly, a few
// allocations per family: through a registry every sample is a
// constant metric sent on a channel, written, hashed and checked, which
// on a fabric of 15,000 ports costs several times the sweep.
func (m *Metrics) Gather() ([]*dto.MetricFamily, error) {
	var out []*dto.MetricFamily
	shared := map[string]*labelSets{}
	for _, f := range families() {
		if mf := m.gatherFamily(f, shared, nil); mf != nil {
			out = append(out, mf)
		}
	}
	return out, nil
}

// labelSets are the label pairs of one family's metrics: k values a
// metric in values, the metrics' rows in label order in rows, and k
// pairs a metric, in that order, in ptrs.
type labelSets struct {
	values []string
	rows   []int32
	ptrs   []*dto.LabelPair
}

// row returns the label values of the i-th metric in label order.
func (l *labelSets) row(i, k int) []string {
	r := int(l.rows[i])
	return l.values[r*k : (r+1)*k]
}

// familyBuffers are the parts of a gathered family that nothing refers
// to once it is written (its label pairs are shared with the next family
// of the same labels, so they are not among them): WriteTo gives them to
// a later family instead of taking fresh memory for each, which on a
// big fabric is tens of megabytes of page faults and garbage.
type familyBuffers struct {
	metrics  []dto.Metric
	list     []*dto.Metric
	counters []dto.Counter
	gauges   []dto.Gauge
	untyped  []dto.Untyped
	samples  []float64
}

// reuse returns s with length n and every element zero, in s's array
// when it is big enough.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// gatherFamily builds one family's metrics, nil when it has none. The
// families with the same label names mostly label the same ports (every
// counter of a port, its link state, width and speed), so a metric whose
// label values the last such family had takes that metric's label pairs
// (shared, keyed by the label names in order): dto's pairs are most of
// a scrape's memory otherwise.
//
// With buf, the family's metrics are built in buf's slices where they are
// big enough, and buf holds the family's slices when it returns: the
// caller may pass buf again once the family is written.
func (m *Metrics) gatherFamily(f family, shared map[string]*labelSets, buf *familyBuffers) *dto.MetricFamily {
	if buf == nil {
		buf = &familyBuffers{}
	}
	d := f.desc
	k := len(d.labels)
	// The label pairs go in name order (order[j] is the j-th label by
	// name), as client_golang sorts them.
	order := make([]int, k)
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(d.labels[a], d.labels[b]) })
	names := make([]string, k)
	for j, o := range order {
		names[j] = d.labels[o]
	}
	sig := strings.Join(names, "\xff")
	prev := shared[sig]
	if prev == nil {
		prev = &labelSets{}
	}
	// A family that emits the label values the last family of these
	// labels emitted, in the same order (every counter of the same ports),
	// takes that family's order and label pairs as they are: only its
	// samples are new. The values are compared as they come, and kept only
	// from the first one that differs.
	same := prev.rows != nil
	var values []string
	samples := buf.samples[:0]
	if cap(samples) < len(prev.rows) {
		samples = make([]float64, 0, len(prev.rows))
	}
	f.each(m, func(vals []string, v float64) {
		if same {
			at := len(samples) * k
			if len(samples) < len(prev.rows) && sameRow(prev.values[at:at+k], vals, order) {
				samples = append(samples, v)
				return
			}
			same = false
			// The last family of these labels tells how many metrics to
			// expect.
			values = make([]string, at, max(len(prev.values), at+k))
			copy(values, prev.values[:at])
		}
		for _, o := range order {
			values = append(values, vals[o])
		}
		samples = append(samples, v)
	})
	n := len(samples)
	if n == 0 {
		return nil
	}
	if same && n < len(prev.rows) {
		// Fewer metrics than the last family: a prefix of its rows, in
		// another order once sorted.
		same = false
		values = slices.Clone(prev.values[:n*k])
	}
	if same {
		return familyOf(d, prev.rows, prev.ptrs, k, samples, buf)
	}
	// Metrics by their label values, in name order; equal ones (none
	// are, in a consistent scrape) keep their order.
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		return slices.Compare(values[int(a)*k:int(a+1)*k], values[int(b)*k:int(b+1)*k])
	})

	cur := &labelSets{values: values, rows: idx, ptrs: make([]*dto.LabelPair, n*k)}
	shared[sig] = cur
	var pairs []dto.LabelPair // made when a metric's labels are new
	ptrs := cur.ptrs
	pj := 0 // the previous family's next metric: both go in label order
	for out, in := range idx {
		i := int(in)
		vals := values[i*k : (i+1)*k]
		c := 1
		for pj < len(prev.rows) {
			if c = slices.Compare(prev.row(pj, k), vals); c >= 0 {
				break
			}
			pj++
		}
		if c == 0 {
			copy(ptrs[out*k:(out+1)*k], prev.ptrs[pj*k:(pj+1)*k])
			continue
		}
		for j := range k {
			// A value the metric before had (the ports of one device
			// share its guid, name and LID) takes its pair.
			if out > 0 && values[int(idx[out-1])*k+j] == vals[j] {
				ptrs[out*k+j] = ptrs[(out-1)*k+j]
				continue
			}
			if len(pairs) == 0 {
				pairs = make([]dto.LabelPair, max(64, n-out))
			}
			p := &pairs[0]
			pairs = pairs[1:]
			p.Name, p.Value = &names[j], &vals[j]
			ptrs[out*k+j] = p
		}
	}
	return familyOf(d, idx, ptrs, k, samples, buf)
}

// sameRow reports whether vals, in a family's label order, are row, the
// same values in label-name order (order[j] is the j-th label by name).
func sameRow(row, vals []string, order []int) bool {
	for j, o := range order {
		if row[j] != vals[o] {
			return false
		}
	}
	return true
}

// familyOf builds the family of d's metrics: the out-th in label order
// has the label pairs ptrs[out*k:(out+1)*k] and the value
// samples[idx[out]]. Its metrics are built in buf's slices where they are
// big enough, and buf holds them when it returns.
func familyOf(d *desc, idx []int32, ptrs []*dto.LabelPair, k int, samples []float64, buf *familyBuffers) *dto.MetricFamily {
	n := len(idx)
	mf := &dto.MetricFamily{Name: &d.name, Help: &d.help}
	metrics := reuse(buf.metrics, n)
	mf.Metric = reuse(buf.list, n)
	var typ dto.MetricType
	var gauges []dto.Gauge
	var counters []dto.Counter
	var untyped []dto.Untyped
	switch d.typ {
	case prometheus.CounterValue:
		typ, counters = dto.MetricType_COUNTER, reuse(buf.counters, n)
		buf.counters = counters
	case prometheus.GaugeValue:
		typ, gauges = dto.MetricType_GAUGE, reuse(buf.gauges, n)
		buf.gauges = gauges
	default:
		typ, untyped = dto.MetricType_UNTYPED, reuse(buf.untyped, n)
		buf.untyped = untyped
	}
	buf.metrics, buf.list, buf.samples = metrics, mf.Metric, samples
	mf.Type = &typ
	for out, in := range idx {
		i := int(in)
		mt := &metrics[out]
		mt.Label = ptrs[out*k : (out+1)*k : (out+1)*k]
		switch typ {
		case dto.MetricType_COUNTER:
			counters[out].Value = &samples[i]
			mt.Counter = &counters[out]
		case dto.MetricType_GAUGE:
			gauges[out].Value = &samples[i]
			mt.Gauge = &gauges[out]
		default:
			untyped[out].Value = &samples[i]
			mt.Untyped = &untyped[out]
		}
		mf.Metric[out] = mt
	}
	return mf
}

// mergedGatherer gathers the scrape's families and others' (the Go and
// process collectors' registry), all by name. Unlike
// prometheus.Gatherers it does not check every metric again: the
// scrape's are consistent by construction, the others' registry checked
// its own. A family name in both is an error, and the scrape's is kept.
type mergedGatherer struct {
	scrape prometheus.Gatherer
	other  prometheus.Gatherer
}

func (g mergedGatherer) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := g.scrape.Gather()
	if g.other == nil {
		return mfs, err
	}
	more, oerr := g.other.Gather()
	var errs prometheus.MultiError
	errs.Append(err)
	errs.Append(oerr)
	seen := make(map[string]bool, len(mfs))
	for _, mf := range mfs {
		seen[mf.GetName()] = true
	}
	for _, mf := range more {
		if seen[mf.GetName()] {
			errs.Append(fmt.Errorf("metric family %s gathered twice", mf.GetName()))
			continue
		}
		mfs = append(mfs, mf)
	}
	slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return cmp.Compare(a.GetName(), b.GetName()) })
	return mfs, errs.MaybeUnwrap()
}
