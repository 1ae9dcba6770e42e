package mad

import (
	"slices"
)

// CounterSource is the PerfMgt attribute a PMA keeps a port counter in,
// as its ClassPortInfo's capability masks say.
type CounterSource uint8

// The places a port counter is read from.
const (
	// NoCounter: the PMA does not keep the counter.
	NoCounter CounterSource = iota
	// FromPortCounters: PortCounters' field, 4 to 32 bits wide.
	FromPortCounters
	// FromPortCountersExtended: PortCountersExtended's 64-bit field.
	FromPortCountersExtended
)

// String names the attribute, "none" for NoCounter.
func (s CounterSource) String() string {
	switch s {
	case FromPortCounters:
		return "PortCounters"
	case FromPortCountersExtended:
		return "PortCountersExtended"
	}
	return "none"
}

// PortCounterNames are the counters a PMA keeps of a port, in
// infiniband_exporter's order: the data and packet counters, the unicast
// and multicast packet counters, the error counters (PortErrorCounters),
// PortXmitWait and QP1Dropped.
// It is a literal (PortDataCounters, PortExtendedDataCounters,
// PortErrorCounters, then the two) so that package init builds nothing.
var PortCounterNames = []string{
	"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
	"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts",
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
	"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
	"PortXmitWait", "QP1Dropped",
}

// CounterSource returns where a PMA with capabilities p keeps the port
// counter named (a field of PortCounters or PortCountersExtended), as
// infiniband-diags reads it:
//
//   - the data and packet counters from PortCountersExtended where the
//     PMA has it (ExtendedWidth or ExtendedWidthNoIETF), else from
//     PortCounters;
//   - the unicast and multicast packet counters from PortCountersExtended
//     with ExtendedWidth only;
//   - the error counters, PortXmitWait and QP1Dropped from
//     PortCountersExtended where it carries them too
//     (AdditionalPortCounters), else from PortCounters, where
//     PortXmitWait needs XmitWait and QP1Dropped needs QP1Dropped.
//
// A name that is no counter of either attribute is NoCounter.
func (p PMACapabilities) CounterSource(name string) CounterSource {
	ext := p.ExtendedCounters()
	switch {
	case slices.Contains(PortDataCounters, name):
		if ext {
			return FromPortCountersExtended
		}
		return FromPortCounters
	case slices.Contains(PortExtendedDataCounters, name):
		if ext && p.Has(PMAExtendedWidth) {
			return FromPortCountersExtended
		}
		return NoCounter
	case slices.Contains(PortErrorCounters, name), name == "PortXmitWait", name == "QP1Dropped":
		if ext && p.Has2(PMAAdditionalPortCounters) {
			return FromPortCountersExtended
		}
		if name == "PortXmitWait" && !p.Has(PMAXmitWait) || name == "QP1Dropped" && !p.Has(PMAQP1Dropped) {
			return NoCounter
		}
		return FromPortCounters
	}
	return NoCounter
}

// CounterAttributes reports which of PortCounters and
// PortCountersExtended must be read for the counters named
// (PortCounterNames when none are) of a PMA with capabilities p.
func (p PMACapabilities) CounterAttributes(names ...string) (portCounters, extended bool) {
	if len(names) == 0 {
		names = PortCounterNames
	}
	for _, n := range names {
		switch p.CounterSource(n) {
		case FromPortCounters:
			portCounters = true
		case FromPortCountersExtended:
			extended = true
		}
	}
	return portCounters, extended
}

// ExtendedFields returns the fields of PortCountersExtended that a PMA
// with capabilities p fills in, as perfquery -x prints them: the unicast
// and multicast packet counters only with ExtendedWidth, the error
// counters, PortXmitWait, QP1Dropped and CounterSelect2 only with
// AdditionalPortCounters.
func (p PMACapabilities) ExtendedFields() []Field {
	var fields []Field
	for _, f := range layoutPortCountersExtended.Fields {
		switch {
		case slices.Contains(PortExtendedDataCounters, f.Name):
			if !p.Has(PMAExtendedWidth) {
				continue
			}
		case slices.Contains(PortErrorCounters, f.Name), f.Name == "PortXmitWait", f.Name == "QP1Dropped", f.Name == "CounterSelect2":
			if !p.Has2(PMAAdditionalPortCounters) {
				continue
			}
		}
		fields = append(fields, f)
	}
	return fields
}

// PortCounterSet is one port's counters read from the attributes a PMA's
// capabilities choose (CounterSource): PortCounters, PortCountersExtended,
// or both. An attribute not read is nil.
type PortCounterSet struct {
	Caps     PMACapabilities
	Counters *PortCounters
	Extended *PortCountersExtended
}

// Value returns the counter named from the attribute CounterSource
// chooses, with its width in bits; ok is false when the PMA does not keep
// it or that attribute was not read.
func (s *PortCounterSet) Value(name string) (v uint64, width int, ok bool) {
	var a Attribute
	switch s.Caps.CounterSource(name) {
	case FromPortCounters:
		if s.Counters == nil {
			return 0, 0, false
		}
		a = s.Counters
	case FromPortCountersExtended:
		if s.Extended == nil {
			return 0, 0, false
		}
		a = s.Extended
	default:
		return 0, 0, false
	}
	f, found := a.Layout().Field(name)
	if !found {
		return 0, 0, false
	}
	return CounterValues(a, name)[0], f.Width, true
}
