package cmd

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	register(Tool{
		Name:    "ibsendtrap",
		Summary: "send a test trap (Notice) to the subnet manager",
		New:     func(f *Factory) *cobra.Command { return newIbsendtrapCmd(f, nil) },
	})
}

// Notice types (IBA 13.4.8.2) and the trap 144 change bits.
const (
	noticeUrgent   = 0x01
	noticeSecurity = 0x02
	noticeInfo     = 0x04
	noticeGeneric  = 0x80

	trap144OtherLocalChanges = 0x01
	trap144NodeDescChange    = 0x0001
	trap144LinkSpeedChange   = 0x0004
)

// trapDef is one trap ibsendtrap can send: its name and how it fills the
// Notice's 64 bytes (generic type, producer type, trap number, issuer LID
// and data details from byte 10).
type trapDef struct {
	name  string
	build func(n []byte, t *trapSource)
}

// trapSource is what a trap says about the port sending it.
type trapSource struct {
	lid       rdma.LID
	nodeType  uint16
	capMask   uint32
	errorPort uint8
}

// noticeHeader fills a generic Notice's first ten bytes.
func noticeHeader(n []byte, t *trapSource, typ byte, trap uint16) {
	n[0] = noticeGeneric | typ
	binary.BigEndian.PutUint16(n[2:], t.nodeType) // producer type, low 16 bits
	binary.BigEndian.PutUint16(n[4:], trap)
	binary.BigEndian.PutUint16(n[6:], uint16(t.lid))
}

// The data details start at byte 10 of the Notice.
const noticeDetails = 10

func trap144(n []byte, t *trapSource, flags uint16) {
	noticeHeader(n, t, noticeInfo, 144)
	d := n[noticeDetails:]
	binary.BigEndian.PutUint16(d[2:], uint16(t.lid))
	d[5] = trap144OtherLocalChanges
	binary.BigEndian.PutUint32(d[6:], t.capMask)
	binary.BigEndian.PutUint16(d[10:], flags)
}

func trap256(n []byte, t *trapSource, truncHop byte, rtnPath []byte) {
	noticeHeader(n, t, noticeSecurity, 256)
	d := n[noticeDetails:]
	binary.BigEndian.PutUint16(d[2:], uint16(t.lid))
	binary.BigEndian.PutUint16(d[4:], 0xffff) // DR SLID
	d[6] = 1                                  // method
	binary.BigEndian.PutUint16(d[8:], 0x15)   // attribute ID: PortInfo
	binary.BigEndian.PutUint32(d[10:], 0x12)  // attribute modifier
	binary.BigEndian.PutUint64(d[14:], 0x1234567812345678)
	d[23] = truncHop
	copy(d[24:], rtnPath)
}

func trap257or258(n []byte, t *trapSource, trap uint16) {
	noticeHeader(n, t, noticeSecurity, trap)
	d := n[noticeDetails:]
	binary.BigEndian.PutUint16(d[2:], 1) // LID1
	binary.BigEndian.PutUint16(d[4:], 2) // LID2
	binary.BigEndian.PutUint32(d[6:], 0x12345678)
	binary.BigEndian.PutUint32(d[10:], 0x010101)
	binary.BigEndian.PutUint32(d[14:], 0x020202)
	binary.BigEndian.PutUint64(d[18:], 0xf8c0000000000001)
	binary.BigEndian.PutUint64(d[26:], 0x1111222233334444)
	binary.BigEndian.PutUint64(d[34:], 0xf8c0000000000001)
	binary.BigEndian.PutUint64(d[42:], 0x5678567812341234)
}

// traps are the traps ibsendtrap sends, the first by default; the data
// each carries is infiniband-diags' test data.
var traps = []trapDef{
	{"node_desc_change", func(n []byte, t *trapSource) { trap144(n, t, trap144NodeDescChange) }},
	{"link_speed_enabled_change", func(n []byte, t *trapSource) { trap144(n, t, trap144LinkSpeedChange) }},
	{"local_link_integrity", func(n []byte, t *trapSource) {
		noticeHeader(n, t, noticeUrgent, 129)
		d := n[noticeDetails:]
		binary.BigEndian.PutUint16(d[2:], uint16(t.lid))
		d[4] = t.errorPort
	}},
	{"sys_image_guid_change", func(n []byte, t *trapSource) {
		noticeHeader(n, t, noticeInfo, 145)
		binary.BigEndian.PutUint64(n[noticeDetails+6:], 0x1234567812345678)
	}},
	{"mkey_lid", func(n []byte, t *trapSource) { trap256(n, t, 0, nil) }},
	{"mkey_dr", func(n []byte, t *trapSource) { trap256(n, t, 0x80|0x4, []byte{5, 6, 7, 8}) }},
	{"pkey", func(n []byte, t *trapSource) { trap257or258(n, t, 257) }},
	{"qkey", func(n []byte, t *trapSource) { trap257or258(n, t, 258) }},
}

// ibsendtrapOptions are ibsendtrap's parsed arguments.
type ibsendtrapOptions struct {
	IO        IOStreams
	Common    CommonOptions
	Trap      *trapDef
	ErrorPort uint8
	// Open opens the MAD transport and names the local port.
	Open func() (*mad.Transactor, *rdma.Port, error)
}

func newIbsendtrapCmd(f *Factory, runF func(*ibsendtrapOptions) error) *cobra.Command {
	o := &ibsendtrapOptions{IO: f.IO, ErrorPort: 1}
	var names []string
	for _, t := range traps {
		names = append(names, t.name)
	}
	c := &cobra.Command{
		Use:   "ibsendtrap [options] [<trap_name>] [<error_port>]",
		Short: "send a test trap (Notice) to the subnet manager",
		Long: `ibsendtrap sends one trap (a SubnTrap of Notice, with infiniband-diags'
test data) from the local port to the subnet manager the port knows, to test
the SM's trap handling. It does not wait for the SM's TrapRepress.

Traps: ` + strings.Join(names, ", ") + ` (the default is ` + names[0] + `). error_port is the port
local_link_integrity names (default 1). --dry-run prints the trap instead
of sending it.`,
		Args: argsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.finish(c); err != nil {
				return err
			}
			o.Trap = &traps[0]
			if len(args) > 0 {
				o.Trap = nil
				for i := range traps {
					if traps[i].name == args[0] {
						o.Trap = &traps[i]
					}
				}
				if o.Trap == nil {
					return usageErrorf("unknown trap %q: want one of %s", args[0], strings.Join(names, ", "))
				}
			}
			if len(args) > 1 {
				n, err := parsePortNumber(args[1])
				if err == nil && n > 255 {
					err = usageErrorf("invalid error port %q: out of range 0 to 255", args[1])
				}
				if err != nil {
					return err
				}
				o.ErrorPort = uint8(n)
			}
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return f.openTransactorAt(&o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibsendtrapRun(o)
		},
	}
	addCommonFlags(c, &o.Common, flagsLocalPort|flagsMAD|flagsJSON|flagsDryRun)
	return c
}

func ibsendtrapRun(o *ibsendtrapOptions) error {
	x, local, err := o.Open()
	if err != nil {
		return err
	}
	defer x.Close()
	if local.SMLID == 0 || local.SMLID > 0xbfff {
		return fmt.Errorf("the local port %d knows no SM (SM LID %d)", local.Number, local.SMLID)
	}
	src := &trapSource{lid: local.LID, nodeType: 1, errorPort: o.ErrorPort}
	// The node type and capability mask come from the local port by
	// direct route; infiniband-diags falls back to a CA and 0 on failure.
	q := &smpQuerier{ctx: o.Common.context(), x: x, path: mad.DRPath(0)}
	if ni, _, err := q.nodeInfo(); err == nil {
		src.nodeType = uint16(ni.NodeType)
	}
	var pi mad.PortInfo
	if _, err := q.decode(&pi, 0); err == nil {
		src.capMask = pi.CapabilityMask
	}
	notice := make([]byte, mad.SMPDataLen)
	o.Trap.build(notice, src)
	if err := x.Send(o.Common.context(), &mad.Request{Path: mad.LIDPath(local.SMLID), Class: mad.ClassSMI, Method: mad.MethodTrap, AttrID: mad.AttrNotice, Name: "Notice", Data: notice}); err != nil {
		return err
	}
	// Nothing answers a trap (ibsim drops the SM's TrapRepress), and a
	// client that leaves at once may take its unread trap with it: one
	// more round trip, handled after the trap, makes sure it went out.
	if _, _, err := q.nodeInfo(); err != nil {
		return withContext(err, "after sending the trap")
	}
	if o.Common.JSON {
		doc := map[string]any{"trap": o.Trap.name, "sm": mad.LIDPath(local.SMLID).String(), "notice": fmt.Sprintf("%x", notice)}
		o.Common.addDryRun(doc)
		return writeJSONDocument(o.IO.Out, doc)
	}
	return nil
}
