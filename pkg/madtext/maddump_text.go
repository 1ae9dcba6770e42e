package madtext

import (
	"fmt"

	"github.com/ibtool/ibtool/pkg/mad"
)

// AppendHeaderDump appends the common MAD header, one dotted line a
// field (decode_mad's and smpdump -p's first lines).
func AppendHeaderDump(b []byte, h mad.Header) []byte {
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
	var h mad.Header
	if err := h.UnmarshalBinary(m); err != nil {
		return b, err
	}
	b = AppendHeaderDump(b, h)
	l, off := mad.LayoutOfMAD(h)
	switch {
	case l == nil:
		b = fmt.Appendf(b, "# attribute %#04x of class %v: not one ibtool decodes; its data:\n", uint16(h.AttrID), h.MgmtClass)
		if off := mad.ClassDataOffset(h); len(m) > off {
			b = AppendXdump(b, m[off:])
		}
		return b, nil
	case len(m) < off+l.Size:
		return b, fmt.Errorf("%d bytes, too short for %s's data (%d bytes at %d)", len(m), l.Name, l.Size, off)
	}
	b = fmt.Appendf(b, "# %s\n", l.Name)
	return AppendDump(b, l, m[off:]), nil
}
