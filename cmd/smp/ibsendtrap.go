package smp

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibsendtrap",
		Light:   true,
		Summary: "send a test trap (Notice) to the subnet manager",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbsendtrapCmd(f, nil) },
	})
}

// Trap 144's LocalChanges and ChangeFlags bits (IBA 14.2.5.1).
const (
	trap144OtherLocalChanges      = 0x01
	trap144NodeDescChange         = 0x0001
	trap144LinkSpeedEnabledChange = 0x0004
)

// trapDef is one trap ibsendtrap can send: its name and its Notice.
type trapDef struct {
	name   string
	notice func(t *trapSource) (mad.Notice, error)
}

// trapSource is what a trap says about the port sending it.
type trapSource struct {
	lid       rdma.LID
	nodeType  mad.NodeType
	capMask   uint32
	errorPort uint8
}

// genericNotice returns a generic Notice of the type and trap number from
// t's port, carrying details.
func genericNotice(t *trapSource, typ uint8, trap uint16, details mad.Attribute) (mad.Notice, error) {
	n := mad.Notice{IsGeneric: 1, Type: typ, ProducerType: uint32(t.nodeType), TrapNumber: trap, IssuerLID: uint16(t.lid)}
	return n, n.SetDetails(details)
}

func trap144(t *trapSource, flags uint16) (mad.Notice, error) {
	return genericNotice(t, mad.NoticeTypeInfo, 144, &mad.Trap144{LID: uint16(t.lid), LocalChanges: trap144OtherLocalChanges, CapabilityMask: t.capMask, ChangeFlags: flags})
}

// trap256 is a bad M_Key trap about a PortInfo Get; a DR one carries its
// return path.
func trap256(t *trapSource, dr bool) (mad.Notice, error) {
	d := mad.Trap256{LID: uint16(t.lid), DRSLID: uint16(rdma.PermissiveLID), Method: uint8(mad.MethodGet),
		AttributeID: uint16(mad.AttrPortInfo), AttributeModifier: 0x12, MKey: 0x1234567812345678}
	if dr {
		d.DRNotice, d.DRHopCount = 1, 4
		d.DRNoticeReturnPath = [30]uint8{5, 6, 7, 8}
	}
	return genericNotice(t, mad.NoticeTypeSecurity, 256, &d)
}

// trap257or258 is a bad P_Key (257) or Q_Key (258) trap.
func trap257or258(t *trapSource, trap uint16) (mad.Notice, error) {
	return genericNotice(t, mad.NoticeTypeSecurity, trap, &mad.Trap257{LID1: 1, LID2: 2, Key: 0x12345678, QP1: 0x010101, QP2: 0x020202,
		GID1: rdma.NewGID(0xf8c0000000000001, 0x1111222233334444), GID2: rdma.NewGID(0xf8c0000000000001, 0x5678567812341234)})
}

// traps are the traps ibsendtrap sends, the first by default; the data
// each carries is infiniband-diags' test data.
var traps = []trapDef{
	{"node_desc_change", func(t *trapSource) (mad.Notice, error) { return trap144(t, trap144NodeDescChange) }},
	{"link_speed_enabled_change", func(t *trapSource) (mad.Notice, error) { return trap144(t, trap144LinkSpeedEnabledChange) }},
	{"local_link_integrity", func(t *trapSource) (mad.Notice, error) {
		return genericNotice(t, mad.NoticeTypeUrgent, 129, &mad.Trap129{LID: uint16(t.lid), PortNum: t.errorPort})
	}},
	{"sys_image_guid_change", func(t *trapSource) (mad.Notice, error) {
		return genericNotice(t, mad.NoticeTypeInfo, 145, &mad.Trap145{SystemImageGUID: 0x1234567812345678})
	}},
	{"mkey_lid", func(t *trapSource) (mad.Notice, error) { return trap256(t, false) }},
	{"mkey_dr", func(t *trapSource) (mad.Notice, error) { return trap256(t, true) }},
	{"pkey", func(t *trapSource) (mad.Notice, error) { return trap257or258(t, 257) }},
	{"qkey", func(t *trapSource) (mad.Notice, error) { return trap257or258(t, 258) }},
}

// ibsendtrapOptions are ibsendtrap's parsed arguments.
type ibsendtrapOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Trap      *trapDef
	ErrorPort uint8
}

func newIbsendtrapCmd(f *cmdutil.Factory, runF func(*ibsendtrapOptions) error) *cobra.Command {
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
		Args: cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
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
					return cmdutil.UsageErrorf("unknown trap %q: want one of %s", args[0], strings.Join(names, ", "))
				}
			}
			if len(args) > 1 {
				n, err := cmdutil.ParseUintArg(args[1], 255)
				if err != nil {
					return cmdutil.UsageErrorf("invalid error port %q: %v", args[1], err)
				}
				o.ErrorPort = uint8(n)
			}
			if runF != nil {
				return runF(o)
			}
			return ibsendtrapRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON|cmdutil.FlagsDryRun|cmdutil.FlagsMKey)
	return c
}

func ibsendtrapRun(o *ibsendtrapOptions) error {
	x, local, err := o.Common.Open()
	if err != nil {
		return err
	}
	if local.SMLID == 0 || local.SMLID > 0xbfff {
		return fmt.Errorf("the local port %d knows no SM (SM LID %d)", local.Number, local.SMLID)
	}
	ctx := o.Common.Context()
	src := &trapSource{lid: local.LID, nodeType: mad.NodeTypeCA, errorPort: o.ErrorPort}
	// The node type and capability mask come from the local port by
	// direct route; infiniband-diags falls back to a CA and 0 on failure.
	q := madrpc.NewQuerier(x, mad.DRPath(0))
	if ni, err := q.NodeInfo(ctx); err == nil {
		src.nodeType = ni.NodeType
	}
	var pi mad.PortInfo
	if _, err := q.Get(ctx, &pi, 0); err == nil {
		src.capMask = pi.CapabilityMask
	}
	notice, err := o.Trap.notice(src)
	if err != nil {
		return err
	}
	data, err := notice.MarshalBinary()
	if err != nil {
		return err
	}
	sm := mad.LIDPath(local.SMLID)
	if err := x.Send(ctx, &madrpc.Request{Path: sm, Class: mad.ClassSMI, Method: mad.MethodTrap, AttrID: mad.AttrNotice, Name: "Notice", Data: data}); err != nil {
		return err
	}
	// Nothing answers a trap (ibsim drops the SM's TrapRepress), and a
	// client that leaves at once may take its unread trap with it: one
	// more round trip, handled after the trap, makes sure it went out.
	if _, err := q.NodeInfo(ctx); err != nil {
		return cmdutil.WithContext(err, "after sending the trap")
	}
	if !o.Common.JSON {
		return nil
	}
	return cmdutil.WriteJSONDocument(o.IO.Out, struct {
		DryRun *[]*madrpc.Plan `json:"dryRun,omitempty"`
		Notice string          `json:"notice"`
		SM     string          `json:"sm"`
		Trap   string          `json:"trap"`
	}{smpDryRunPlans(&o.Common), fmt.Sprintf("%x", data), sm.String(), o.Trap.name})
}
