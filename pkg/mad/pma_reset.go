package mad

// The reset mask bit of each counter, as ResetData lays a mask out:
// CounterSelect's bits, then CounterSelect2's from bit 16 (IBA 16.1.3.5
// and 16.1.4.11). An empty name is a reserved bit.
var (
	portCountersResetBits = [...]string{
		"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
		"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
		"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
		"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
		"PortXmitWait", "QP1Dropped",
	}
	portCountersExtendedResetBits = [...]string{
		"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
		"PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts",
		"", "", "", "", "", "", "", "",
		"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
		"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
		"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
		"PortXmitWait", "QP1Dropped",
	}
)

// ResetMask returns the reset mask of attribute l (as ResetData lays it
// out) that clears the counters named, for a PMA with capabilities p:
// PortXmitWait and QP1Dropped only where p has XmitWait and QP1Dropped,
// as infiniband-diags sets their bits. PortCounters and
// PortCountersExtended take their counters' select bits; the other
// counter attributes (PortXmitDiscardDetails, PortRcvErrorDetails, ...)
// one bit per counter in the attribute's order. A name l has no counter
// of selects nothing.
func (p PMACapabilities) ResetMask(l *Layout, names ...string) uint64 {
	var mask uint64
	for _, n := range names {
		if n == "PortXmitWait" && !p.Has(PMAXmitWait) || n == "QP1Dropped" && !p.Has(PMAQP1Dropped) {
			continue
		}
		if bit, ok := resetBit(l, n); ok {
			mask |= 1 << bit
		}
	}
	return mask
}

// resetBit returns the bit of counter name in l's reset mask.
func resetBit(l *Layout, name string) (uint, bool) {
	var bits []string
	switch l {
	case &layoutPortCounters:
		bits = portCountersResetBits[:]
	case &layoutPortCountersExtended:
		bits = portCountersExtendedResetBits[:]
	default:
		bit := uint(0)
		for _, f := range l.Fields {
			switch f.Name {
			case "PortSelect", "CounterSelect", "CounterSelect2":
				continue
			case name:
				return bit, true
			}
			bit++
		}
		return 0, false
	}
	for i, n := range bits {
		if n == name && n != "" {
			return uint(i), true
		}
	}
	return 0, false
}
