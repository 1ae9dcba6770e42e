package trace

import (
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/trace"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "decode_mad",
		Light:   true,
		Summary: "decode a MAD given in hex (from stdin or a file)",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newDecodeMadCmd(f) },
	})
}

// umadHeaderLen is the kernel's struct ib_user_mad header ahead of a MAD
// read from /dev/infiniband/umadN (with P_Key index).
const umadHeaderLen = 64

// decodeMadOptions are decode_mad's flags.
type decodeMadOptions struct {
	IO     cmdutil.IOStreams
	Offset int
	UMAD   bool
	// LRH is -l: the data is an InfiniBand packet from its LRH on
	// (python-rdma's decode_mad -l), the MAD its UD payload.
	LRH  bool
	JSON bool
	File string
	// Verbose is -v/--verbosity (python-rdma's): the umad or packet
	// headers in front of the MAD; -vv also the input in hex.
	Verbose int
	// verbosity is --verbosity counted apart (-v's python-rdma long
	// name beside --verbose).
	verbosity int
}

func newDecodeMadCmd(f *cmdutil.Factory) *cobra.Command {
	o := &decodeMadOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "decode_mad [options] [FILE]",
		Short: "decode a MAD given in hex (from stdin or a file)",
		Long: `decode_mad reads a MAD as hex digits (spaces, newlines, colons and a leading
0x are ignored, so hex dumps paste as they are) from FILE or standard input,
and prints its header and, for attributes ibtool knows (SMP, PMA and CC),
every field as libibmad labels them. python-rdma's decode_mad.`,
		Example: `  decode_mad < mad.hex
  ibtool smpquery -vv ni 1 2>&1 | ...   # the dumps -vv prints
  decode_mad --umad frame.hex           # a frame read from /dev/infiniband/umad0`,
		Args: cmdutil.ArgsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				o.File = args[0]
			}
			o.Verbose += o.verbosity
			if o.Verbose > 0 && o.JSON {
				return cmdutil.UsageErrorf("-v prints headers as text; --json is one document: give one")
			}
			return decodeMadRun(o)
		},
	}
	fl := c.Flags()
	fl.IntVarP(&o.Offset, "offset", "o", 0, "skip this many bytes first")
	fl.BoolVar(&o.UMAD, "umad", false, "the data starts with a kernel umad header (64 bytes)")
	fl.BoolVarP(&o.LRH, "lrh", "l", false, "the data is an InfiniBand packet from its LRH on (LRH, GRH, BTH, DETH, then the MAD)")
	fl.BoolVar(&o.JSON, "json", false, "one JSON document")
	fl.CountVarP(&o.Verbose, "verbose", "v", "also the umad header (--umad) or the packet's headers (-l); -vv also the input in hex")
	fl.CountVar(&o.verbosity, "verbosity", "the same as -v (python-rdma's long name of it)")
	return c
}

// madOfPacket returns the MAD an InfiniBand packet (from its LRH on)
// carries to or from QP0 or QP1, past its LRH, GRH, BTH and DETH, as
// python-rdma's decode_link finds it, and the packet decoded.
func madOfPacket(data []byte) ([]byte, *trace.Packet, error) {
	// A packet pasted without its ICRC and VCRC is taken as one cut
	// there: python-rdma slices the headers off and never looks for them.
	p := trace.Decode(trace.Frame{Link: trace.LinkInfiniBand, Data: data, OrigLen: len(data) + 6}, trace.DecodeOptions{})
	switch {
	case p.MADData != nil:
		return p.MADData, p, nil
	case p.Err != nil:
		return nil, nil, fmt.Errorf("the packet does not decode: %v", p.Err)
	}
	return nil, nil, fmt.Errorf("the packet carries no MAD (%s to QP %d)", p.BTH.Opcode, p.BTH.DestQP)
}

// parseHex reads hex digits, ignoring white space, colons and 0x prefixes.
func parseHex(text string) ([]byte, error) {
	var b strings.Builder
	for _, field := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == ':' }) {
		field = strings.TrimPrefix(strings.TrimPrefix(field, "0x"), "0X")
		b.WriteString(field)
	}
	s := b.String()
	if len(s)%2 == 1 {
		return nil, fmt.Errorf("an odd number of hex digits (%d)", len(s))
	}
	data, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not hex: %v", err)
	}
	return data, nil
}

func decodeMadRun(o *decodeMadOptions) error {
	var in io.Reader = o.IO.In
	name := "standard input"
	if o.File != "" {
		f, err := os.Open(o.File)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, o.File
	}
	text, err := io.ReadAll(io.LimitReader(in, 1<<20))
	if err != nil {
		return err
	}
	data, err := parseHex(string(text))
	if err != nil {
		return cmdutil.UsageErrorf("%s: %v", name, err)
	}
	if o.Offset < 0 || o.Offset > len(data) {
		return cmdutil.UsageErrorf("offset %d: the input has %d bytes", o.Offset, len(data))
	}
	data = data[o.Offset:]
	// -v's headers come first, as python-rdma prints them.
	var headers []byte
	if o.Verbose >= 2 {
		headers = appendInput(headers, data)
	}
	if o.UMAD {
		if len(data) < umadHeaderLen {
			return cmdutil.UsageErrorf("%s: %d bytes, shorter than a umad header (%d)", name, len(data), umadHeaderLen)
		}
		if o.Verbose >= 1 {
			headers = appendUMADHeader(headers, data)
		}
		data = data[umadHeaderLen:]
	}
	if o.LRH {
		var p *trace.Packet
		if data, p, err = madOfPacket(data); err != nil {
			return cmdutil.UsageErrorf("%s: %v", name, err)
		}
		if o.Verbose >= 1 {
			headers = appendPacketHeaders(headers, p)
		}
	}
	if _, err := o.IO.Out.Write(headers); err != nil {
		return err
	}
	var h mad.Header
	if err := h.UnmarshalBinary(data); err != nil {
		return cmdutil.UsageErrorf("%s: %v", name, err)
	}
	if h.MgmtClass == mad.ClassSA {
		return decodeSA(o, name, h, data)
	}
	if o.JSON {
		doc := decodeMadDoc{Header: h}
		if l, off := mad.LayoutOfMAD(h); l != nil && len(data) >= off+l.Size {
			doc.Attribute, doc.Data = l.Name, l.Decode(data[off:])
		}
		return cmdutil.WriteJSONDocument(o.IO.Out, doc)
	}
	b, err := madtext.AppendMADDump(nil, data)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	_, err = o.IO.Out.Write(b)
	return err
}

// decodeMadDoc is the --json document of a MAD other than an SA one: the
// attribute and its data when ibtool has its layout.
type decodeMadDoc struct {
	Attribute string        `json:"attribute,omitempty"`
	Data      mad.Attribute `json:"data,omitempty"`
	Header    mad.Header    `json:"header"`
}

// decodeSADoc is the --json document of an SA MAD. Records is there
// (null when the MAD has none) exactly when ibtool has the attribute's
// layout.
type decodeSADoc struct {
	Attribute       string           `json:"attribute,omitempty"`
	AttributeOffset int              `json:"attributeOffset"`
	ComponentMask   string           `json:"componentMask"`
	Header          mad.Header       `json:"header"`
	Records         *[]mad.Attribute `json:"records,omitempty"`
	RMPP            mad.RMPPHeader   `json:"rmpp"`
	SMKey           string           `json:"smKey"`
}

// decodeSA prints an SA MAD: the common header, the RMPP and SA headers,
// and its records, as many as AttributeOffset fits in the data (one for
// methods other than GetTableResp).
func decodeSA(o *decodeMadOptions, name string, h mad.Header, data []byte) error {
	var r mad.RMPPHeader
	var sa mad.SAHeader
	if err := sa.UnmarshalBinary(data); err != nil {
		return cmdutil.UsageErrorf("%s: %d bytes, shorter than the SA headers (%d)", name, len(data), mad.SAHeaderEnd)
	}
	r.UnmarshalBinary(data)
	var l *mad.Layout
	for _, c := range mad.SALayouts {
		if c.ID == h.AttrID {
			l = c
			break
		}
	}
	// The last (or only) segment of an RMPP message says how much of it
	// is data: PayloadLength counts from the end of the RMPP header.
	if r.Flags&mad.RMPPActive != 0 && r.Flags&mad.RMPPLast != 0 && len(data) == mad.Size {
		if end := mad.RMPPHeaderOffset + mad.RMPPHeaderLen + int(r.PayloadLength); end >= mad.SAHeaderEnd && end < len(data) {
			data = data[:end]
		}
	}
	var recs [][]byte
	if l != nil {
		step := sa.RecordLen()
		if h.Method != mad.MethodGetTableResp || step == 0 {
			step = l.Size
		}
		for rest := data[mad.SAHeaderEnd:]; len(rest) >= l.Size; rest = rest[min(step, len(rest)):] {
			recs = append(recs, rest[:l.Size])
			if h.Method != mad.MethodGetTableResp || step < l.Size {
				break
			}
		}
	}
	if o.JSON {
		doc := decodeSADoc{Header: h, RMPP: r, SMKey: fmt.Sprintf("0x%016x", sa.SMKey),
			AttributeOffset: int(sa.AttributeOffset), ComponentMask: fmt.Sprintf("0x%016x", sa.ComponentMask)}
		if l != nil {
			var out []mad.Attribute
			for _, rec := range recs {
				out = append(out, l.Decode(rec))
			}
			doc.Attribute, doc.Records = l.Name, &out
		}
		return cmdutil.WriteJSONDocument(o.IO.Out, doc)
	}
	b := madtext.AppendHeaderDump(nil, h)
	line := func(label, format string, a ...any) {
		b = madtext.AppendDotted(b, label)
		b = fmt.Appendf(b, format, a...)
		b = append(b, '\n')
	}
	line("RMPPVersion", "%d", r.Version)
	line("RMPPType", "%d", r.Type)
	line("RMPPFlags", "%#x (RRespTime %d)", uint8(r.Flags), r.RespTime)
	line("RMPPStatus", "%d", r.Status)
	line("SegmentNumber", "%d", r.SegmentNumber)
	line("PayloadLength", "%d", r.PayloadLength)
	line("SM_Key", "0x%016x", sa.SMKey)
	line("AttributeOffset", "%d", sa.AttributeOffset)
	line("ComponentMask", "0x%016x", sa.ComponentMask)
	if l == nil {
		b = fmt.Appendf(b, "# SA attribute %#04x: not one ibtool decodes; its data:\n", uint16(h.AttrID))
		b = madtext.AppendXdump(b, data[mad.SAHeaderEnd:])
	}
	for i, rec := range recs {
		b = fmt.Appendf(b, "# %s %d\n", l.Name, i+1)
		b = madtext.AppendDump(b, l, rec)
	}
	_, err := o.IO.Out.Write(b)
	return err
}
