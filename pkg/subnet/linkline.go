package subnet

import (
	"strconv"
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// LinkLine renders a port and its link as iblinkinfo.c's print_port
// prints them: the port's LID and number, the link's width, speed and
// states, and the far end with what the link could run at. ibqueryerrors
// -r prints the same pieces.
type LinkLine struct {
	// Names names the nodes; nil: their descriptions, cleaned.
	Names *nodemap.Map
	// OneLine is iblinkinfo -l: each port line starts with the port's
	// GUID and node name, and the far end's GUID is shown.
	OneLine bool
	// Additional is iblinkinfo -p: a port that is not down shows its
	// HOQLife and VLStallCount.
	Additional bool
}

// noPeerText ends the line of a port that is down and has no far end.
const noPeerText = "           [  ] \"\" ( )\n"

// zeroPortInfo and zeroExtInfo stand for attributes not read; never
// written.
var (
	zeroPortInfo mad.PortInfo
	zeroExtInfo  mad.MlnxExtPortInfo
)

// InfoOrZero returns the port's PortInfo, zero when it was not read (as
// libibnetdisc's zeroed buffer). Callers only read it.
func (p *Port) InfoOrZero() *mad.PortInfo {
	if p.Info == nil {
		return &zeroPortInfo
	}
	return p.Info
}

// ExtInfoOrZero returns the port's MlnxExtPortInfo, zero when not read.
// Callers only read it.
func (p *Port) ExtInfoOrZero() *mad.MlnxExtPortInfo {
	if p.ExtInfo == nil {
		return &zeroExtInfo
	}
	return p.ExtInfo
}

func (l *LinkLine) name(n *Node) string { return l.Names.Name(uint64(n.GUID), n.Desc) }

// AppendPort appends the port's line (print_port) to b, prefix first: the
// port, its link, and its far end, "Port not available" when the link is
// up but its far end unknown.
func (l *LinkLine) AppendPort(b []byte, p *Port, prefix string) []byte {
	n := p.Node
	b = append(b, prefix...)
	if l.OneLine {
		b = append(appendGUID(b, uint64(p.GUID)), " \""...)
		b = append(appendRight(b, 30, func(b []byte) []byte { return append(b, l.name(n)...) }), "\" "...)
	} else {
		b = append(b, "      "...)
	}
	if n.Type != mad.NodeTypeSwitch && !l.OneLine {
		b = append(appendGUID(b, uint64(p.GUID)), ' ')
	}
	b = append(appendInt(b, int(p.LID()), 6), ' ')
	b = append(AppendPortNum(b, p), " =="...)
	b = append(l.AppendLink(b, p), "==>  "...)
	switch {
	case p.Remote != nil:
		return l.AppendPeer(b, p, l.OneLine)
	case p.InfoOrZero().LinkState == mad.PortStateDown:
		return l.AppendNoPeer(b)
	}
	return append(b, "    \"Port not available\"\n"...)
}

// AppendNoPeer appends the end of the line of a port with no far end,
// as print_port prints a port that is down: empty peer columns.
func (l *LinkLine) AppendNoPeer(b []byte) []byte { return append(b, noPeerText...) }

// AppendLink appends the "( 4X 2.5 Gbps Active/ LinkUp)" part of a port
// line to b.
func (l *LinkLine) AppendLink(b []byte, p *Port) []byte {
	pi := p.InfoOrZero()
	width, speed := uint32(pi.LinkWidthActive), uint32(pi.LinkSpeedActive)
	fdr10 := p.ExtInfoOrZero().LinkSpeedActive&1 != 0
	var ext uint32
	if p.HasCapMask() {
		ext = uint32(p.LinkSpeedExtActive())
	} else {
		width, speed = 0, 0
	}
	if pi.LinkState != mad.PortStateDown {
		b = append(b, '(')
		b = appendRight(b, 3, func(b []byte) []byte { return mad.FormatLinkWidth.AppendText(b, width) })
		b = append(b, ' ')
		b = appendRight(b, 18, func(b []byte) []byte { return appendSpeedText(b, ext, speed, fdr10) })
		b = append(b, ' ')
	} else {
		b = append(b, "(              "...)
	}
	b = appendRight(b, 6, func(b []byte) []byte { return mad.FormatPortState.AppendText(b, uint32(pi.LinkState)) })
	b = append(b, '/')
	b = appendRight(b, 8, func(b []byte) []byte { return mad.FormatPhysPortState.AppendText(b, uint32(pi.PhysLinkState)) })
	b = append(b, ')')
	if pi.LinkState != mad.PortStateDown && l.Additional {
		b = strconv.AppendUint(append(b, " (HOQ:"...), uint64(pi.HOQLife), 10)
		b = strconv.AppendUint(append(b, " VL_Stall:"...), uint64(pi.VLStallCount), 10)
		b = append(b, ')')
	}
	return b
}

// AppendPeer appends the far end of a linked port as print_port writes
// it (with its port GUID first when withGUID): LID, port, name, and what
// the link could run at.
func (l *LinkLine) AppendPeer(b []byte, p *Port, withGUID bool) []byte {
	r := p.Remote
	if withGUID {
		b = append(appendGUID(b, uint64(r.GUID)), ' ')
	}
	b = append(appendInt(b, int(r.PeerLID()), 6), ' ')
	b = append(AppendPortNum(b, r), " \""...)
	b = append(append(b, l.name(r.Node)...), "\" ("...)
	widthMsg, speedMsg := p.CouldBe()
	return append(append(append(append(b, widthMsg...), ' '), speedMsg...), ")\n"...)
}

// AppendPortNum appends a port's number and external number as print_port
// does: "%4d[%2s]".
func AppendPortNum(b []byte, p *Port) []byte {
	b = append(appendInt(b, p.Num, 4), '[')
	if p.ExtNum != 0 {
		b = appendInt(b, p.ExtNum, 2)
	} else {
		b = append(b, "  "...)
	}
	return append(b, ']')
}

// PeerLID is the LID a link's far end is shown with: its port's, or for a
// switch port that has none its switch's.
func (p *Port) PeerLID() rdma.LID {
	if p.BaseLID == 0 {
		return p.Node.SMALID
	}
	return p.BaseLID
}

// SpeedText names the port's speed as iblinkinfo prints it: the extended
// speed when there is one, FDR10 when MlnxExtPortInfo says so, else the
// speed.
func (p *Port) SpeedText() string {
	return string(appendSpeedText(nil, uint32(p.LinkSpeedExtActive()), uint32(p.InfoOrZero().LinkSpeedActive), p.ExtInfoOrZero().LinkSpeedActive&1 != 0))
}

// appendSpeedText appends a speed's text to b (see SpeedText).
func appendSpeedText(b []byte, ext, speed uint32, fdr10 bool) []byte {
	switch {
	case ext != 0:
		return mad.FormatLinkSpeedExt.AppendText(b, ext)
	case fdr10:
		return append(b, "10.0 Gbps (FDR10)"...)
	}
	return mad.FormatLinkSpeed.AppendText(b, speed)
}

// CouldBe is get_max_msg: what the port's link could run at when both
// ends support more than it runs at ("Could be 12X", "Could be 10.0
// Gbps"); "" where it runs at the most.
func (p *Port) CouldBe() (widthMsg, speedMsg string) {
	r := p.Remote
	pi, ri := p.InfoOrZero(), r.InfoOrZero()
	if w := maxWidth(pi.LinkWidthSupported & ri.LinkWidthSupported); w&uint32(pi.LinkWidthActive) == 0 {
		widthMsg = couldBeText(mad.FormatLinkWidth, w)
	}
	if p.capMask()&mad.PortCapIsExtendedSpeedsSupported != 0 && r.capMask()&mad.PortCapIsExtendedSpeedsSupported != 0 &&
		pi.LinkSpeedExtSupported != 0 && ri.LinkSpeedExtSupported != 0 {
		if s := highestBit(uint32(pi.LinkSpeedExtSupported & ri.LinkSpeedExtSupported)); s&uint32(pi.LinkSpeedExtActive) == 0 {
			speedMsg = couldBeText(mad.FormatLinkSpeedExt, s)
		}
		return widthMsg, speedMsg
	}
	if p.ExtInfoOrZero().LinkSpeedSupported&1 != 0 && r.ExtInfoOrZero().LinkSpeedSupported&1 != 0 {
		if p.ExtInfoOrZero().LinkSpeedActive&1 == 0 {
			if pi.LinkSpeedActive == 4 {
				speedMsg = "Could be FDR10 (Found link at QDR but expected speed is FDR10)"
			} else {
				speedMsg = "Could be FDR10"
			}
		}
		return widthMsg, speedMsg
	}
	if s := highestBit(uint32(pi.LinkSpeedSupported & ri.LinkSpeedSupported)); s&uint32(pi.LinkSpeedActive) == 0 {
		speedMsg = couldBeText(mad.FormatLinkSpeed, s)
	}
	return widthMsg, speedMsg
}

// maxWidth is ibdiag_common.c's get_max_width: the widest width in a set.
func maxWidth(set mad.LinkWidthSupported) uint32 {
	r := 0
	switch {
	case set&8 != 0:
		r = 3
	case set&4 != 0:
		r = 2
	case set&2 != 0:
		r = 1
	case set&0x10 != 0:
		r = 4
	}
	return 1 << r
}

// highestBit is get_max: the highest bit set, 1 for none.
func highestBit(v uint32) uint32 {
	r := 0
	for v >>= 1; v != 0; v >>= 1 {
		r++
	}
	return 1 << r
}

// couldBeTexts holds the "Could be" texts made so far: a fabric has a
// few, printed on thousands of ports.
var couldBeTexts struct {
	sync.Mutex
	m map[couldBeKey]string
}

type couldBeKey struct {
	f mad.Format
	v uint32
}

// couldBeText is "Could be " and value v in format f.
func couldBeText(f mad.Format, v uint32) string {
	couldBeTexts.Lock()
	defer couldBeTexts.Unlock()
	k := couldBeKey{f, v}
	s, ok := couldBeTexts.m[k]
	if !ok {
		if couldBeTexts.m == nil {
			couldBeTexts.m = make(map[couldBeKey]string)
		}
		s = "Could be " + f.Text(v)
		couldBeTexts.m[k] = s
	}
	return s
}

// appendRight appends what add appends, right-aligned in a field of width
// w, as fmt's %*s does.
func appendRight(b []byte, w int, add func([]byte) []byte) []byte {
	start := len(b)
	b = add(b)
	if n := len(b) - start; n < w {
		pad := w - n
		for range pad {
			b = append(b, ' ')
		}
		copy(b[start+pad:], b[start:start+n])
		for i := start; i < start+pad; i++ {
			b[i] = ' '
		}
	}
	return b
}

// appendInt appends v right-aligned in a field of width w (fmt's %*d).
func appendInt(b []byte, v, w int) []byte {
	return appendRight(b, w, func(b []byte) []byte { return strconv.AppendInt(b, int64(v), 10) })
}

// appendGUID appends v as "0x" and 16 hex digits (fmt's 0x%016x).
func appendGUID(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}
