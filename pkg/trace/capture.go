package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"
)

// LinkType is a capture's link-layer header type (the LINKTYPE_ values of
// tcpdump.org's registry, which pcap and pcapng share).
type LinkType uint32

// The link types Decode understands.
const (
	LinkEthernet   LinkType = 1   // LINKTYPE_ETHERNET: RoCEv1 and RoCEv2 on Ethernet, tcpdump on lo too
	LinkRaw        LinkType = 101 // LINKTYPE_RAW: IPv4 or IPv6 with no link header
	LinkLinuxSLL   LinkType = 113 // LINKTYPE_LINUX_SLL: tcpdump -i any (libpcap before 1.10)
	LinkERF        LinkType = 197 // LINKTYPE_ERF: Endace records; ibdump's InfiniBand captures
	LinkIPv4       LinkType = 228 // LINKTYPE_IPV4
	LinkIPv6       LinkType = 229 // LINKTYPE_IPV6
	LinkInfiniBand LinkType = 247 // LINKTYPE_INFINIBAND: packets from the LRH on
	LinkLinuxSLL2  LinkType = 276 // LINKTYPE_LINUX_SLL2: tcpdump -i any (libpcap 1.10 and later)
)

var linkTypeNames = map[LinkType]string{
	LinkEthernet: "Ethernet", LinkRaw: "raw IP", LinkLinuxSLL: "Linux cooked (SLL)",
	LinkERF: "ERF", LinkIPv4: "IPv4", LinkIPv6: "IPv6", LinkInfiniBand: "InfiniBand",
	LinkLinuxSLL2: "Linux cooked v2 (SLL2)",
}

// String names the link type.
func (l LinkType) String() string {
	if s, ok := linkTypeNames[l]; ok {
		return s
	}
	return fmt.Sprintf("link type %d", uint32(l))
}

// Frame is one captured frame as the capture file holds it.
type Frame struct {
	Number  int       // 1-based position in the capture
	Time    time.Time // capture time stamp
	Link    LinkType
	Data    []byte // the captured bytes
	OrigLen int    // the frame's length on the wire (more than len(Data) when the capture cut it short)
}

// Capture formats.
const (
	pcapMagicMicro   = 0xa1b2c3d4
	pcapMagicNano    = 0xa1b23c4d
	pcapngBlockSHB   = 0x0a0d0d0a
	pcapngByteOrder  = 0x1a2b3c4d
	pcapngBlockIDB   = 1
	pcapngBlockPB    = 2 // obsolete packet block
	pcapngBlockSPB   = 3
	pcapngBlockEPB   = 6
	maxRecordLen     = 1 << 24 // a frame larger than this is a corrupt file, not a frame
	pcapngOptTSResol = 9
)

// CaptureReader reads the frames of a pcap or pcapng file in order.
type CaptureReader struct {
	r      *bufio.Reader
	ng     bool
	order  binary.ByteOrder
	nano   bool     // pcap: nanosecond time stamps
	link   LinkType // pcap: the file's link type
	ifaces []ngInterface
	n      int
}

type ngInterface struct {
	link    LinkType
	snaplen uint32
	perSec  uint64 // time stamp units a second
}

// ReadCapture starts reading a capture, telling pcap from pcapng by the
// first bytes.
func ReadCapture(r io.Reader) (*CaptureReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("not a capture file: %d bytes", len(head))
	}
	c := &CaptureReader{r: br}
	if binary.BigEndian.Uint32(head) == pcapngBlockSHB {
		c.ng = true
		return c, nil
	}
	var h [24]byte
	copy(h[:], head)
	for _, o := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		switch o.Uint32(h[:]) {
		case pcapMagicMicro:
			c.order = o
		case pcapMagicNano:
			c.order, c.nano = o, true
		}
	}
	if c.order == nil {
		return nil, fmt.Errorf("not a pcap or pcapng file (magic %#08x)", binary.BigEndian.Uint32(h[:]))
	}
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, fmt.Errorf("pcap file header: %w", unexpected(err))
	}
	c.link = LinkType(c.order.Uint32(h[20:]) & 0x0fffffff) // the top bits may carry FCS flags
	return c, nil
}

// LinkType returns a pcap file's link type, or the first interface's of a
// pcapng file (0 before its first interface block has been read).
func (c *CaptureReader) LinkType() LinkType {
	if !c.ng {
		return c.link
	}
	if len(c.ifaces) > 0 {
		return c.ifaces[0].link
	}
	return 0
}

// Next returns the next frame, or io.EOF after the last. A file cut short
// in the middle of a record is an io.ErrUnexpectedEOF; the frames before it
// stay valid. Each frame has its own Data.
func (c *CaptureReader) Next() (Frame, error) {
	if c.ng {
		return c.nextNG()
	}
	var h [16]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		return Frame{}, fmt.Errorf("record %d header: %w", c.n+1, unexpected(err))
	}
	sec, frac := c.order.Uint32(h[0:]), c.order.Uint32(h[4:])
	caplen, origlen := c.order.Uint32(h[8:]), c.order.Uint32(h[12:])
	if caplen > maxRecordLen {
		return Frame{}, fmt.Errorf("record %d: captured length %d is not plausible", c.n+1, caplen)
	}
	data := make([]byte, caplen)
	if _, err := io.ReadFull(c.r, data); err != nil {
		return Frame{}, fmt.Errorf("record %d: %w", c.n+1, unexpected(err))
	}
	c.n++
	ns := int64(frac) * 1000
	if c.nano {
		ns = int64(frac)
	}
	return Frame{Number: c.n, Time: time.Unix(int64(sec), ns).UTC(), Link: c.link, Data: data,
		OrigLen: max(int(origlen), int(caplen))}, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// nextNG reads pcapng blocks until one holds a packet.
func (c *CaptureReader) nextNG() (Frame, error) {
	for {
		var h [8]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			if err == io.EOF {
				return Frame{}, io.EOF
			}
			return Frame{}, fmt.Errorf("pcapng block header: %w", unexpected(err))
		}
		typ := binary.BigEndian.Uint32(h[:])
		if typ == pcapngBlockSHB {
			// A section header: its byte-order magic says how to read
			// everything up to the next one, including its own length.
			var bom [4]byte
			if _, err := io.ReadFull(c.r, bom[:]); err != nil {
				return Frame{}, fmt.Errorf("pcapng section header: %w", unexpected(err))
			}
			switch {
			case binary.LittleEndian.Uint32(bom[:]) == pcapngByteOrder:
				c.order = binary.LittleEndian
			case binary.BigEndian.Uint32(bom[:]) == pcapngByteOrder:
				c.order = binary.BigEndian
			default:
				return Frame{}, errors.New("pcapng section header: bad byte-order magic")
			}
			c.ifaces = c.ifaces[:0]
			if _, err := c.blockBody(c.order.Uint32(h[4:]), 12); err != nil {
				return Frame{}, err
			}
			continue
		}
		if c.order == nil {
			return Frame{}, errors.New("pcapng: no section header")
		}
		typ = c.order.Uint32(h[:])
		body, err := c.blockBody(c.order.Uint32(h[4:]), 8)
		if err != nil {
			return Frame{}, err
		}
		switch typ {
		case pcapngBlockIDB:
			if err := c.addInterface(body); err != nil {
				return Frame{}, err
			}
		case pcapngBlockEPB, pcapngBlockPB, pcapngBlockSPB:
			return c.packetBlock(typ, body)
		}
	}
}

// blockBody reads the rest of a block of total length n of which read
// bytes are gone, checks the trailing length, and returns the body.
func (c *CaptureReader) blockBody(n uint32, read int) ([]byte, error) {
	if n < 12 || int(n) < read+4 || n%4 != 0 || n > maxRecordLen {
		return nil, fmt.Errorf("pcapng block length %d is not plausible", n)
	}
	rest := make([]byte, int(n)-read)
	if _, err := io.ReadFull(c.r, rest); err != nil {
		return nil, fmt.Errorf("pcapng block: %w", unexpected(err))
	}
	if c.order.Uint32(rest[len(rest)-4:]) != n {
		return nil, errors.New("pcapng block: the trailing length does not match")
	}
	return rest[:len(rest)-4], nil
}

func (c *CaptureReader) addInterface(b []byte) error {
	if len(b) < 8 {
		return errors.New("pcapng interface block too short")
	}
	ifc := ngInterface{link: LinkType(c.order.Uint16(b)), snaplen: c.order.Uint32(b[4:]), perSec: 1e6}
	for opts := b[8:]; len(opts) >= 4; {
		code, n := c.order.Uint16(opts), int(c.order.Uint16(opts[2:]))
		if code == 0 || 4+n > len(opts) {
			break
		}
		if code == pcapngOptTSResol && n >= 1 {
			// 10^-v seconds, or 2^-v with the top bit set; finer than
			// a nanosecond is kept to a nanosecond's worth of range.
			v := opts[4]
			switch {
			case v&0x80 != 0 && v&0x7f < 64:
				ifc.perSec = 1 << (v & 0x7f)
			case v&0x80 == 0 && v <= 19:
				ifc.perSec = 1
				for range v {
					ifc.perSec *= 10
				}
			}
		}
		opts = opts[4+(n+3)&^3:]
	}
	c.ifaces = append(c.ifaces, ifc)
	return nil
}

func (c *CaptureReader) packetBlock(typ uint32, b []byte) (Frame, error) {
	c.n++
	var ifID int
	var ts uint64
	var caplen, origlen uint32
	var data []byte
	switch typ {
	case pcapngBlockEPB, pcapngBlockPB:
		if len(b) < 20 {
			return Frame{}, fmt.Errorf("record %d: pcapng packet block too short", c.n)
		}
		if typ == pcapngBlockEPB {
			ifID = int(c.order.Uint32(b))
		} else {
			ifID = int(c.order.Uint16(b))
		}
		ts = uint64(c.order.Uint32(b[4:]))<<32 | uint64(c.order.Uint32(b[8:]))
		caplen, origlen, data = c.order.Uint32(b[12:]), c.order.Uint32(b[16:]), b[20:]
	default:
		if len(b) < 4 {
			return Frame{}, fmt.Errorf("record %d: pcapng simple packet block too short", c.n)
		}
		origlen, data = c.order.Uint32(b), b[4:]
		caplen = min(origlen, uint32(len(data)))
		if len(c.ifaces) > 0 && c.ifaces[0].snaplen != 0 {
			caplen = min(caplen, c.ifaces[0].snaplen)
		}
	}
	if ifID >= len(c.ifaces) {
		return Frame{}, fmt.Errorf("record %d: interface %d was never described", c.n, ifID)
	}
	if int(caplen) > len(data) {
		return Frame{}, fmt.Errorf("record %d: captured length %d exceeds the block (%d)", c.n, caplen, len(data))
	}
	ifc := c.ifaces[ifID]
	sec, frac := ts/ifc.perSec, ts%ifc.perSec
	hi, lo := bits.Mul64(frac, 1e9)
	ns, _ := bits.Div64(hi, lo, ifc.perSec)
	return Frame{Number: c.n, Time: time.Unix(int64(sec), int64(ns)).UTC(), Link: ifc.link,
		Data: data[:caplen], OrigLen: max(int(origlen), int(caplen))}, nil
}

// CaptureWriter writes frames to a pcap or pcapng file (one interface,
// microsecond time stamps), for tests and for saving frames.
type CaptureWriter struct {
	w    io.Writer
	ng   bool
	link LinkType
}

// NewPcapWriter writes a pcap file header for the link type and returns a
// writer for its records.
func NewPcapWriter(w io.Writer, link LinkType) (*CaptureWriter, error) {
	h := make([]byte, 24)
	binary.LittleEndian.PutUint32(h, pcapMagicMicro)
	binary.LittleEndian.PutUint16(h[4:], 2)
	binary.LittleEndian.PutUint16(h[6:], 4)
	binary.LittleEndian.PutUint32(h[16:], 262144)
	binary.LittleEndian.PutUint32(h[20:], uint32(link))
	_, err := w.Write(h)
	return &CaptureWriter{w: w, link: link}, err
}

// NewPcapngWriter writes a pcapng section header and one interface
// description for the link type, and returns a writer for its packets.
func NewPcapngWriter(w io.Writer, link LinkType) (*CaptureWriter, error) {
	le := binary.LittleEndian
	shb := le.AppendUint32(nil, pcapngBlockSHB)
	shb = le.AppendUint32(shb, 28)
	shb = le.AppendUint32(shb, pcapngByteOrder)
	shb = le.AppendUint16(shb, 1)
	shb = le.AppendUint16(shb, 0)
	shb = le.AppendUint64(shb, math.MaxUint64) // section length unknown
	shb = le.AppendUint32(shb, 28)
	idb := le.AppendUint32(nil, pcapngBlockIDB)
	idb = le.AppendUint32(idb, 20)
	idb = le.AppendUint16(idb, uint16(link))
	idb = le.AppendUint16(idb, 0)
	idb = le.AppendUint32(idb, 262144)
	idb = le.AppendUint32(idb, 20)
	_, err := w.Write(append(shb, idb...))
	return &CaptureWriter{w: w, ng: true, link: link}, err
}

// WriteFrame writes one record: data as captured, origLen the length on
// the wire (len(data) when 0).
func (c *CaptureWriter) WriteFrame(t time.Time, data []byte, origLen int) error {
	if origLen == 0 {
		origLen = len(data)
	}
	le := binary.LittleEndian
	var b []byte
	if c.ng {
		us := uint64(t.UnixMicro())
		pad := (4 - len(data)%4) % 4
		n := uint32(32 + len(data) + pad)
		b = le.AppendUint32(b, pcapngBlockEPB)
		b = le.AppendUint32(b, n)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, uint32(us>>32))
		b = le.AppendUint32(b, uint32(us))
		b = le.AppendUint32(b, uint32(len(data)))
		b = le.AppendUint32(b, uint32(origLen))
		b = append(b, data...)
		b = append(b, make([]byte, pad)...)
		b = le.AppendUint32(b, n)
	} else {
		b = le.AppendUint32(b, uint32(t.Unix()))
		b = le.AppendUint32(b, uint32(t.Nanosecond()/1000))
		b = le.AppendUint32(b, uint32(len(data)))
		b = le.AppendUint32(b, uint32(origLen))
		b = append(b, data...)
	}
	_, err := c.w.Write(b)
	return err
}
