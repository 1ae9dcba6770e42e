package exporter

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MetricType is the type a metric family is declared with.
type MetricType int

// The metric types the exporter writes.
const (
	Gauge MetricType = iota
	Counter
)

// String is the type's name in a # TYPE line.
func (t MetricType) String() string {
	if t == Counter {
		return "counter"
	}
	return "gauge"
}

// Desc describes a metric family: its name, help text, type and the
// names of its labels, in the order a Sample gives their values.
type Desc struct {
	Name   string
	Help   string
	Type   MetricType
	Labels []string
	// order is Labels' indexes sorted by label name, the order the
	// exposition writes them in.
	order []int
}

// NewDesc returns a Desc.
func NewDesc(name, help string, t MetricType, labels ...string) *Desc {
	d := &Desc{Name: name, Help: help, Type: t, Labels: labels}
	d.order = make([]int, len(labels))
	for i := range d.order {
		d.order[i] = i
	}
	slices.SortFunc(d.order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return d
}

// Sample is one metric: a family's label values and its value.
type Sample struct {
	Desc   *Desc
	Values []string
	Value  float64
}

// Write writes samples in the text exposition format: families sorted by
// name, each with its # HELP and # TYPE lines, its samples sorted by
// their label values taken in label-name order, labels by name, as
// client_golang's Gatherer and expfmt.MetricFamilyToText write them.
func Write(w io.Writer, samples []Sample) error {
	sorted := slices.Clone(samples)
	slices.SortStableFunc(sorted, compareSamples)
	bw := bufio.NewWriter(w)
	var b []byte
	var last *Desc
	for i := range sorted {
		s := &sorted[i]
		if last == nil || s.Desc.Name != last.Name {
			last = s.Desc
			b = appendHeader(b, s.Desc)
		}
		b = appendSample(b, s)
		if len(b) > 32<<10 {
			if _, err := bw.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// compareSamples orders samples by family name, then by label values in
// label-name order (client_golang's MetricSorter: shorter label sets
// first, then the values compared as strings).
func compareSamples(a, b Sample) int {
	if c := strings.Compare(a.Desc.Name, b.Desc.Name); c != 0 {
		return c
	}
	if len(a.Values) != len(b.Values) {
		return len(a.Values) - len(b.Values)
	}
	for _, i := range a.Desc.order {
		if c := strings.Compare(a.Values[i], b.Values[i]); c != 0 {
			return c
		}
	}
	return 0
}

// appendHeader appends a family's # HELP and # TYPE lines.
func appendHeader(b []byte, d *Desc) []byte {
	b = append(b, "# HELP "...)
	b = append(b, d.Name...)
	b = append(b, ' ')
	b = appendEscaped(b, d.Help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, d.Name...)
	b = append(b, ' ')
	b = append(b, d.Type.String()...)
	return append(b, '\n')
}

func appendSample(b []byte, s *Sample) []byte {
	b = append(b, s.Desc.Name...)
	if len(s.Values) > 0 {
		b = append(b, '{')
		for n, i := range s.Desc.order {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, s.Desc.Labels[i]...)
			b = append(b, `="`...)
			b = appendEscaped(b, s.Values[i], true)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, s.Value)
	return append(b, '\n')
}

// appendEscaped escapes a help text (backslash, newline) or a label value
// (also the double quote).
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat writes a value as expfmt does: shortest representation,
// exponent form for large numbers, NaN and ±Inf spelled out.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(b, '1')
	case f == 0:
		return append(b, '0')
	case f == -1:
		return append(b, "-1"...)
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, +1):
		return append(b, "+Inf"...)
	case math.IsInf(f, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}
