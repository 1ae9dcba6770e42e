package smp

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// smpSwitchPortInfo is every port of smpFabric's switch: Active, LID 2,
// with extended speeds, CapabilityMask2 and PortInfoExtended.
var smpSwitchPortInfo = mad.PortInfo{MKey: 0x55, GIDPrefix: 0xfe80000000000000, LID: 2, SMLID: 1,
	CapabilityMask: 1<<15 | 1<<14, LocalPortNum: 1, LinkState: 4, PhysLinkState: 5,
	LinkWidthEnabled: 2, LinkWidthSupported: 3, LinkWidthActive: 2,
	LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: 1, MKeyLeasePeriod: 15,
	VLArbHighCap: 8, VLArbLowCap: 40, GUIDCap: 5, CapabilityMask2: 1 << 1}

// smpCAPortInfo is the CA's port 1, cabled to the switch's port 1.
var smpCAPortInfo = mad.PortInfo{GIDPrefix: 0xfe80000000000000, LID: 3, SMLID: 1, LocalPortNum: 1, LinkState: 4, PhysLinkState: 5,
	LinkWidthEnabled: 3, LinkWidthSupported: 3, LinkWidthActive: 2,
	LinkSpeedSupported: 7, LinkSpeedEnabled: 7, LinkSpeedActive: 1}

// smpFabric is an 8-port Mellanox switch (the local node: by LID and by
// the DR path 0) with a CA one hop away by direct route (0,1), an SM on
// the switch. Each node is an SMA, for the tests to look at what was
// sent.
type smpFabric struct {
	sw, ca *madtest.SMA
}

func newSMPFabric() *smpFabric {
	sw := madtest.NewSMA().
		Put(&mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: 2, NumPorts: 8, NodeGUID: 0x200000, PortGUID: 0x200000,
			SystemImageGUID: 0x200000, PartitionCap: 8, DeviceID: 0xcb20, VendorID: 0x2c9, LocalPortNum: 1}, 0).
		Put(&mad.NodeDescription{NodeDescription: nodeDesc("Switch1")}, 0).
		Put(&smpSwitchPortInfo, madtest.AnyMod).
		Put(&mad.SwitchInfo{LinearFDBCap: 48, PartitionEnforcementCap: 40, EnhancedPort0: 0}, 0).
		Put(&mad.PortInfoExtended{CapabilityMask: 1, FECModeActive: 1}, madtest.AnyMod).
		Put(&mad.MlnxExtPortInfo{StateChangeEnable: 0, LinkSpeedSupported: 1, LinkSpeedEnabled: 1}, madtest.AnyMod).
		Put(&mad.SLtoVLMappingTable{SLToVLMap: 0x0123456789abcdef}, madtest.AnyMod).
		Put(&mad.GUIDInfo{GUID0: 0x200000, GUID1: 0x200001, GUID4: 0x200004}, madtest.AnyMod).
		Put(&mad.SMInfo{GUID: 0x200000, SMKey: 0x77, ActCount: 7, Priority: 1, SMState: 3}, 0)
	var pk mad.PKeyTable
	for i, k := range []uint16{0xffff, 0x8001, 0x0002} {
		pk.SetPKey(i, k)
	}
	sw.Put(&pk, madtest.AnyMod)
	var vla mad.VLArbitrationTable
	for i, e := range []mad.VLArbEntry{{VL: 0, Weight: 1}, {VL: 1, Weight: 2}, {VL: 15, Weight: 3}, {VL: 2, Weight: 4}} {
		vla.SetEntry(i, e)
	}
	sw.Put(&vla, madtest.AnyMod)
	ca := madtest.NewSMA().
		Put(&mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: 1, NumPorts: 2, NodeGUID: 0x100000, PortGUID: 0x100001,
			SystemImageGUID: 0x100000, PartitionCap: 64, LocalPortNum: 1}, 0).
		Put(&mad.NodeDescription{NodeDescription: nodeDesc("Hca1 HCA-1")}, 0).
		Put(&smpCAPortInfo, madtest.AnyMod).
		Put(&mad.SMInfo{GUID: 0x100000, ActCount: 3, Priority: 2, SMState: 2}, 0).
		Put(&pk, madtest.AnyMod).
		Put(&mad.SLtoVLMappingTable{SLToVLMap: 0x0000000011111111}, 0)
	return &smpFabric{sw: sw, ca: ca}
}

func nodeDesc(s string) mad.NodeDescString {
	var d mad.NodeDescString
	copy(d[:], s)
	return d
}

// handle routes a request: a DR SMP of one hop or more to the CA, the
// rest to the switch.
func (f *smpFabric) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	var dr mad.DRSMPHeader
	if h.UnmarshalBinary(req.MAD) == nil && h.MgmtClass == mad.ClassSMIDirect &&
		dr.UnmarshalBinary(req.MAD) == nil && dr.HopCount > 0 {
		return f.ca.Handle(req)
	}
	return f.sw.Handle(req)
}

// smpLocal is the local port of smpFabric: the switch's port 0 by LID 2,
// the SM at LID 1.
var smpLocal = &rdma.Port{Number: 1, LID: 2, SMLID: 1}

// transactor returns a transactor on h with o's options, dry run
// included, the plans' lines going to out.
func smpTestTransactor(o *cmdutil.CommonOptions, h madtest.Handler, out *bytes.Buffer) *madrpc.Transactor {
	return cmdtest.FakeTransactor(o, h, 20*time.Millisecond, out)
}

// smpToolRunners run each of the SMP tools on a fake fabric: they parse
// args as the command line does, point the tool's transport at h, and
// return what the tool wrote to stdout and stderr.
var smpToolRunners = map[string]func(t *testing.T, h madtest.Handler, args []string) (out, errOut string, err error){
	"smpquery": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "smpquery", newSmpqueryCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = cmdtest.NoPort(func() (*madrpc.Transactor, error) {
			o.LocalLID = smpLocal.LID
			return smpTestTransactor(&o.Common, h, out), nil
		})
		err := smpqueryRun(o)
		return out.String(), errOut.String(), err
	},
	"smpdump": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "smpdump", newSmpdumpCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return smpTestTransactor(&o.Common, h, out), nil, nil }
		err := smpdumpRun(o)
		return out.String(), errOut.String(), err
	},
	"ibaddr": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "ibaddr", newIbaddrCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			return smpTestTransactor(&o.Common, h, out), smpLocal, nil
		}
		err := ibaddrRun(o)
		return out.String(), errOut.String(), err
	},
	"sminfo": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "sminfo", newSminfoCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			return smpTestTransactor(&o.Common, h, out), smpLocal, nil
		}
		err := sminfoRun(o)
		return out.String(), errOut.String(), err
	},
	"ibportstate": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "ibportstate", newIbportstateCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			return smpTestTransactor(&o.Common, h, out), smpLocal, nil
		}
		err := ibportstateRun(o)
		return out.String(), errOut.String(), err
	},
	"query": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "query", newQueryCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			return smpTestTransactor(&o.Common, h, out), smpLocal, nil
		}
		err := queryRun(o)
		return out.String(), errOut.String(), err
	},
	"ibsendtrap": func(t *testing.T, h madtest.Handler, args []string) (string, string, error) {
		o, out, errOut := parseSMPTool(t, "ibsendtrap", newIbsendtrapCmd, args)
		o.IO.Out, o.IO.ErrOut = out, errOut
		o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
			return smpTestTransactor(&o.Common, h, out), smpLocal, nil
		}
		err := ibsendtrapRun(o)
		return out.String(), errOut.String(), err
	},
}

// parseSMPTool parses a tool's arguments and returns its options and
// buffers for its output.
func parseSMPTool[O any](t *testing.T, name string, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args []string) (*O, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return cmdtest.ParsedOptions(t, name, newCmd, args), &bytes.Buffer{}, &bytes.Buffer{}
}

// runSMPTool runs tool with args on a new smpFabric.
func runSMPTool(t *testing.T, tool string, args ...string) (out, errOut string, err error) {
	t.Helper()
	return smpToolRunners[tool](t, newSMPFabric().handle, args)
}
