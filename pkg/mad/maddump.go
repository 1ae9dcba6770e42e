package mad

import "fmt"

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

// AppendHeaderDump appends the common MAD header, one dotted line a
// field (decode_mad's and smpdump -p's first lines).
func AppendHeaderDump(b []byte, h Header) []byte {
	line := func(label, format string, a ...any) {
		b = AppendDotted(b, label)
		b = fmt.Appendf(b, format, a...)
		b = append(b, '\n')
	}
	line("BaseVersion", "%d", h.BaseVersion)
	line("MgmtClass", "%#02x (%v)", uint8(h.MgmtClass), h.MgmtClass)
	line("ClassVersion", "%d", h.ClassVersion)
	line("Method", "%#02x (%v)", uint8(h.Method), h.Method)
	line("Status", "0x%04x", uint16(h.Status))
	line("TransactionID", "0x%016x", h.TID)
	line("AttributeID", "0x%04x", uint16(h.AttrID))
	line("AttributeModifier", "0x%08x", h.AttrMod)
	return b
}

// AppendMADDump appends a whole MAD decoded, as python-rdma's printer of
// a reply: its header, then "# Name" and every field of the attribute
// when ibtool has its layout, else a hex dump of its class data. A MAD
// too short for its header or its attribute is an error.
func AppendMADDump(b, m []byte) ([]byte, error) {
	var h Header
	if err := h.UnmarshalBinary(m); err != nil {
		return b, err
	}
	b = AppendHeaderDump(b, h)
	l, off := LayoutOfMAD(h)
	switch {
	case l == nil:
		b = fmt.Appendf(b, "# attribute %#04x of class %v: not one ibtool decodes; its data:\n", uint16(h.AttrID), h.MgmtClass)
		if off := ClassDataOffset(h); len(m) > off {
			b = AppendXdump(b, m[off:])
		}
		return b, nil
	case len(m) < off+l.Size:
		return b, fmt.Errorf("%d bytes, too short for %s's data (%d bytes at %d)", len(m), l.Name, l.Size, off)
	}
	b = fmt.Appendf(b, "# %s\n", l.Name)
	return AppendDump(b, l, m[off:]), nil
}

// CongestionLogDataOffset is where CongestionLog's data starts in the MAD.
const CongestionLogDataOffset = 32
