package mad

// ClassDataOffset returns where the class data of a MAD with header h
// starts: after the common header, or at the SMP's, PMA's and CC's
// management data (byte 64).
func ClassDataOffset(h Header) int {
	if h.MgmtClass.IsSMP() || h.MgmtClass == ClassPerf || h.MgmtClass == ClassCC {
		return SMPDataOffset
	}
	return HeaderLen
}

// LayoutOfMAD finds the generated layout of the attribute a MAD with
// header h carries (SMP, PMA, CC and ClassPortInfo; not SA records), and
// where its data starts in the MAD; nil when ibtool has none.
func LayoutOfMAD(h Header) (*Layout, int) {
	class := h.MgmtClass
	if class == ClassSMIDirect {
		class = ClassSMI
	}
	for _, l := range Layouts {
		if l.ID != h.AttrID || l.ID == 0 {
			continue
		}
		switch {
		case l.Class == class:
		// ClassPortInfo's layout is the same in every GMP class.
		case l.ID == AttrClassPortInfo && class != ClassSMI:
		default:
			continue
		}
		if l.ID == AttrCongestionLogSwitch && class == ClassCC {
			return l, CongestionLogDataOffset
		}
		return l, SMPDataOffset
	}
	return nil, 0
}

// CongestionLogDataOffset is where CongestionLog's data starts in the MAD.
const CongestionLogDataOffset = 32
