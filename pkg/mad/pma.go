package mad

import (
	"fmt"
	"math/bits"
	"strings"
)

// AllPortSelect is the PortSelect that asks a PMA for every port of its
// node at once (IBA 16.1.3.5), when its ClassPortInfo says AllPortSelect.
const AllPortSelect = 0xff

// pmaDataLen is the length of a PerfMgt MAD's data area.
const pmaDataLen = Size - SMPDataOffset

// PMACapability is a bit of a PerfMgt ClassPortInfo's CapabilityMask: what
// a port's performance manager agent supports (IBA 16.1.3.1 and its
// errata; libibmad's IB_PM_*).
type PMACapability uint16

// The CapabilityMask bits of a PMA.
const (
	// PMAAllPortSelect: PortSelect 255 sums or resets every port.
	PMAAllPortSelect PMACapability = 1 << 8
	// PMAExtendedWidth: PortCountersExtended, unicast and multicast
	// counters included.
	PMAExtendedWidth PMACapability = 1 << 9
	// PMAExtendedWidthNoIETF: PortCountersExtended without the unicast
	// and multicast counters.
	PMAExtendedWidthNoIETF PMACapability = 1 << 10
	// PMASamplesOnly: PortSamplesControl only, no PortCounters.
	PMASamplesOnly PMACapability = 1 << 11
	// PMAXmitWait: PortCounters' PortXmitWait counts.
	PMAXmitWait PMACapability = 1 << 12
	// PMARSFECCounters: PortExtendedSpeedsCountersRSFEC where the port
	// runs RS-FEC.
	PMARSFECCounters PMACapability = 1 << 14
	// PMAQP1Dropped: PortCounters' QP1Dropped counts.
	PMAQP1Dropped PMACapability = 1 << 15
)

var pmaCapabilityNames = []struct {
	bit  PMACapability
	name string
}{
	{PMAAllPortSelect, "AllPortSelect"},
	{PMAExtendedWidth, "ExtendedWidth"},
	{PMAExtendedWidthNoIETF, "ExtendedWidthNoIETF"},
	{PMASamplesOnly, "SamplesOnly"},
	{PMAXmitWait, "XmitWait"},
	{PMARSFECCounters, "RSFECCounters"},
	{PMAQP1Dropped, "QP1Dropped"},
}

// String names the bits set, "AllPortSelect|XmitWait"; bits without a
// name show as hex.
func (c PMACapability) String() string {
	var names []string
	for _, n := range pmaCapabilityNames {
		if c&n.bit != 0 {
			names = append(names, n.name)
			c &^= n.bit
		}
	}
	if c != 0 || len(names) == 0 {
		names = append(names, fmt.Sprintf("%#x", uint16(c)))
	}
	return strings.Join(names, "|")
}

// PMACapability2 is a bit of a PerfMgt ClassPortInfo's CapabilityMask2.
type PMACapability2 uint32

// PMAAdditionalPortCounters says PortCountersExtended carries the error
// counters too (IsAdditionalPortCountersExtendedSupported).
const PMAAdditionalPortCounters PMACapability2 = 1 << 1

// String names the bits set; bits without a name show as hex.
func (c PMACapability2) String() string {
	var names []string
	if c&PMAAdditionalPortCounters != 0 {
		names = append(names, "AdditionalPortCounters")
		c &^= PMAAdditionalPortCounters
	}
	if c != 0 || len(names) == 0 {
		names = append(names, fmt.Sprintf("%#x", uint32(c)))
	}
	return strings.Join(names, "|")
}

// PMACapabilities are the capability masks of a PMA's ClassPortInfo.
type PMACapabilities struct {
	Mask  PMACapability
	Mask2 PMACapability2
}

// CapabilitiesOf returns the capability masks of a PerfMgt ClassPortInfo.
func CapabilitiesOf(cpi *ClassPortInfo) PMACapabilities {
	return PMACapabilities{Mask: PMACapability(cpi.CapabilityMask), Mask2: PMACapability2(cpi.CapabilityMask2)}
}

// Has reports whether any of the bits of c is set.
func (p PMACapabilities) Has(c PMACapability) bool { return p.Mask&c != 0 }

// Has2 reports whether any of the bits of c is set in CapabilityMask2.
func (p PMACapabilities) Has2(c PMACapability2) bool { return p.Mask2&c != 0 }

// ExtendedCounters reports whether the PMA has PortCountersExtended, with
// or without the unicast and multicast counters.
func (p PMACapabilities) ExtendedCounters() bool {
	return p.Has(PMAExtendedWidth | PMAExtendedWidthNoIETF)
}

// Hide zeroes what pc says of counters the PMA does not claim to keep:
// PortXmitWait without PMAXmitWait, as infiniband-diags shows it.
func (p PMACapabilities) Hide(pc *PortCounters) {
	if !p.Has(PMAXmitWait) {
		pc.PortXmitWait = 0
	}
}

// PortErrorCounters are the PortCounters error counters infiniband-diags
// checks against thresholds, in libibmad's order (IB_PC_ERR_SYM_F to
// IB_PC_VL15_DROPPED_F, CounterSelect2 left out). PortCountersExtended
// has fields of the same names.
var PortErrorCounters = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
	"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
}

// PortDataCounters are the data and packet counters of PortCounters and
// PortCountersExtended; PortExtendedDataCounters are those only
// PortCountersExtended has, with PMAExtendedWidth.
var (
	PortDataCounters         = []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
	PortExtendedDataCounters = []string{"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts"}
)

// SelectPort sets a's PortSelect, the second byte of every PerfMgt
// counter attribute, to port.
func SelectPort(a Attribute, port int) error {
	data, err := a.AppendBinary(nil)
	if err != nil {
		return err
	}
	if len(data) < 2 {
		return &ShortDataError{Attr: a.Layout().Name, Want: 2, Got: len(data)}
	}
	data[1] = uint8(port)
	return a.UnmarshalBinary(data)
}

// ResetData is the data of a Set of l's attribute that clears the
// counters mask selects for port, as libibmad's performance_reset_via
// lays it out: a mask of 0 selects every counter. The
// PortExtendedSpeedsCounters attributes take all 64 bits in their
// CounterSelect; every other attribute takes the low 16 bits in
// CounterSelect and the rest in PortCounters' CounterSelect2 (8 bits at
// byte 18, whatever field the attribute has there), or in
// PortCountersExtended's own 32-bit CounterSelect2.
func ResetData(l *Layout, port int, mask uint64) []byte {
	data := make([]byte, max(pmaDataLen, l.Size))
	data[1] = uint8(port)
	if l == &layoutPortExtendedSpeedsCounters || l == &layoutPortExtendedSpeedsCountersRSFEC {
		if mask == 0 {
			mask = ^uint64(0)
		}
		sel, _ := l.Field("CounterSelect")
		sel.SetValue(data, mask)
		return data
	}
	m := uint32(mask)
	if m == 0 {
		m = ^uint32(0)
	}
	sel, _ := layoutPortCounters.Field("CounterSelect")
	sel.SetValue(data, uint64(m&0xffff))
	sel2, _ := layoutPortCounters.Field("CounterSelect2")
	if l == &layoutPortCountersExtended {
		sel2, _ = l.Field("CounterSelect2")
	}
	sel2.SetValue(data, uint64(m>>16))
	return data
}

// AddCounters adds a's counters to sum, an attribute of the same type,
// each saturating at its field's width as perfquery's aggregate_* do; the
// select fields (PortSelect, CounterSelect, CounterSelect2) take a's
// values. A zero sum becomes a.
func AddCounters(sum, a Attribute) error {
	l := a.Layout()
	if sum.Layout() != l {
		return fmt.Errorf("adding %s counters to %s", l.Name, sum.Layout().Name)
	}
	s, err := sum.AppendBinary(nil)
	if err != nil {
		return err
	}
	d, err := a.AppendBinary(nil)
	if err != nil {
		return err
	}
	for _, f := range l.Fields {
		v := f.Value(d)
		switch f.Name {
		case "PortSelect", "CounterSelect", "CounterSelect2":
			f.SetValue(s, v)
			continue
		}
		limit := ^uint64(0) >> (64 - f.Width)
		total, carry := bits.Add64(f.Value(s), v, 0)
		if carry != 0 || total > limit {
			total = limit
		}
		f.SetValue(s, total)
	}
	return sum.UnmarshalBinary(s)
}

// PortInfoExtended's CapabilityMask bit and FECModeActive values that say
// a port runs RS-FEC (IBA 14.2.5.21).
const (
	pieFECModeSupported = 1 << 0
	pieRSFECModeActive  = 2
	pieRS2FECModeActive = 4
)

// RSFECActive reports whether the port runs RS-FEC: its PMA's
// PortExtendedSpeedsCounters then come as PortExtendedSpeedsCountersRSFEC.
func (p *PortInfoExtended) RSFECActive() bool {
	return p.CapabilityMask&pieFECModeSupported != 0 && (p.FECModeActive == pieRSFECModeActive || p.FECModeActive == pieRS2FECModeActive)
}

// CounterValues returns the values of a's fields of the names given, in
// their order: 0 for a name a has no field of.
func CounterValues(a Attribute, names ...string) []uint64 {
	data, err := a.AppendBinary(nil)
	vals := make([]uint64, len(names))
	if err != nil {
		return vals
	}
	l := a.Layout()
	for i, name := range names {
		if f, ok := l.Field(name); ok {
			vals[i] = f.Value(data)
		}
	}
	return vals
}
