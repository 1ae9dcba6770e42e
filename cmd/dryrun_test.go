package cmd

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// dryRunPortInfo is the PortInfo every port of dryRunFabric has: an
// Active 4X SDR port of LID 2 whose SM is at LID 1.
var dryRunPortInfo = mad.PortInfo{LID: 2, SMLID: 1, LocalPortNum: 1, LinkState: stateActive, PhysLinkState: 5,
	LinkWidthEnabled: 2, LinkWidthSupported: 3, LinkWidthActive: 2,
	LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: 1, MKeyLeasePeriod: 15}

// dryRunFabric answers Gets as one CA (Hca1's NodeInfo, dryRunPortInfo,
// an SM, a PMA with AllPortSelect) would, and counts the requests by
// whether their method changes state.
type dryRunFabric struct {
	mu            sync.Mutex
	gets, changes int
}

func (ff *dryRunFabric) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	ff.mu.Lock()
	if h.Method.ChangesState() {
		ff.changes++
	} else {
		ff.gets++
	}
	ff.mu.Unlock()
	var data []byte
	switch {
	case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrNodeInfo:
		data, _ = hex.DecodeString(hca1NodeInfo)
	case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrPortInfo:
		data, _ = dryRunPortInfo.MarshalBinary()
	case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrSMInfo:
		si := mad.SMInfo{GUID: 0x200000, ActCount: 7, Priority: 1, SMState: 3}
		data, _ = si.MarshalBinary()
	case h.MgmtClass == mad.ClassPerf && h.AttrID == mad.AttrClassPortInfo:
		cpi := mad.ClassPortInfo{CapabilityMask: uint16(mad.PMAAllPortSelect | mad.PMAXmitWait)}
		data, _ = cpi.MarshalBinary()
	case h.MgmtClass == mad.ClassPerf && h.AttrID == mad.AttrPortCounters:
		pc := mad.PortCounters{PortSelect: req.MAD[mad.SMPDataOffset+1], SymbolErrorCounter: 5}
		data, _ = pc.MarshalBinary()
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

// transactor returns a transactor on the fake with o's options, dry run
// included, the plans' lines going to out.
func (ff *dryRunFabric) transactor(o *CommonOptions, out io.Writer) *mad.Transactor {
	opts := o.transactorOptions()
	opts.Timeout = 50 * time.Millisecond
	o.setDryRun(out, &opts)
	return mad.NewTransactor(madtest.New(ff.handle), opts)
}

// dryRunLocal is the local port of the fake: Hca1's port 1, LID 2.
var dryRunLocal = &rdma.Port{Number: 1, LID: 2, SMLID: 1}

// parsedOptions parses a tool's arguments and returns its options.
func parsedOptions[O any](t *testing.T, name string, newCmd func(*Factory, func(*O) error) *cobra.Command, args []string) *O {
	t.Helper()
	var got *O
	err := parseToolArgs(t, name, func(f *Factory) *cobra.Command {
		return newCmd(f, func(o *O) error { got = o; return nil })
	}, args)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// dryRunFakeFabric is a discovered fabric for init_all_ports and
// set_port_state: Hca1 port 1 cabled to port 1 of an 8-port switch, Hca2
// port 1 to its port 2; every cabled port Active.
func dryRunFakeFabric() *subnet.Fabric {
	raw, _ := dryRunPortInfo.MarshalBinary()
	port := func(n *subnet.Node, num int) *subnet.Port {
		pi := dryRunPortInfo
		p := &subnet.Port{Node: n, Num: num, Info: &pi}
		copy(p.InfoRaw[:], raw)
		n.Ports[num] = p
		return p
	}
	hca1 := &subnet.Node{GUID: 0x100000, Type: mad.NodeTypeCA, NumPorts: 2, Ports: make([]*subnet.Port, 3), Path: []uint8{0}}
	sw := &subnet.Node{GUID: 0x200000, Type: mad.NodeTypeSwitch, NumPorts: 8, Ports: make([]*subnet.Port, 9), Path: []uint8{0, 1}}
	hca2 := &subnet.Node{GUID: 0x300000, Type: mad.NodeTypeCA, NumPorts: 2, Ports: make([]*subnet.Port, 3), Path: []uint8{0, 1, 2}}
	link := func(a, b *subnet.Port) { a.Remote, b.Remote = b, a }
	link(port(hca1, 1), port(sw, 1))
	link(port(sw, 2), port(hca2, 1))
	return &subnet.Fabric{Nodes: []*subnet.Node{hca1, sw, hca2}, From: hca1, FromPort: 1}
}

// TestDryRunTools runs each tool that changes fabric state with --dry-run
// against the fake: the Gets reach it, no Set or Trap does, and stdout has
// what was read and the plan.
func TestDryRunTools(t *testing.T) {
	type run func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error
	tests := []struct {
		name string
		run  run
		// wantGets says the tool reads the fabric.
		wantGets bool
		// want is the whole output, or its end when suffix is set.
		want   string
		suffix bool
	}{
		{"init_all_ports", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "init_all_ports", newInitAllPortsCmd, []string{"--dry-run", "-v"})
			o.IO.Out, o.IO.ErrOut = out, out
			o.Discover = func() (*subnet.Fabric, error) { return dryRunFakeFabric(), nil }
			o.Transactor = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return initAllPortsRun(o)
		}, false, `dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1,2 attrmod=0x1 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x2 LinkState=Down
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0 attrmod=0x1 LinkState=Down
`, false},
		{"set_port_state", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "set_port_state", newSetPortStateCmd, []string{"--dry-run", "-v", "--disable", "--init", "0,1@2"})
			o.IO.Out, o.IO.ErrOut = out, out
			o.Discover = func() (*subnet.Fabric, error) { return dryRunFakeFabric(), nil }
			o.Transactor = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return setPortStateRun(o)
		}, true, "dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x2 LinkState=Down PhysLinkState=Disabled\n", false},
		{"ibportstate disable", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "ibportstate", newIbportstateCmd, []string{"--dry-run", "2", "1", "disable"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, out), dryRunLocal, nil }
			return ibportstateRun(o)
		}, true, `Initial CA/RT PortInfo:
# Port info: Lid 2 port 1
LinkState:.......................Active
PhysLinkState:...................LinkUp
Lid:.............................2
SMLid:...........................1
LMC:.............................0
LinkWidthSupported:..............1X or 4X
LinkWidthEnabled:................4X
LinkWidthActive:.................4X
LinkSpeedSupported:..............2.5 Gbps
LinkSpeedEnabled:................2.5 Gbps
LinkSpeedActive:.................2.5 Gbps
Mkey:............................<not displayed>
MkeyLeasePeriod:.................15
ProtectBits:.....................0
Disable may be irreversible
dry-run: SubnSet(PortInfo) from=madtest0/1 lid=2 attrmod=0x1 PhysLinkState=Disabled
`, false},
		{"ibportstate speed width", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "ibportstate", newIbportstateCmd, []string{"--dry-run", "-D", "0,1", "1", "width", "3", "speed", "1", "fdr10", "1"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, out), dryRunLocal, nil }
			return ibportstateRun(o)
		}, true, `ProtectBits:.....................0
dry-run: SubnSet(MlnxExtPortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 StateChangeEnable=0x01 LinkSpeedEnabled=0x01
dry-run: SubnSet(PortInfo) from=madtest0/1 dr=0,1 attrmod=0x1 LinkWidthEnabled="1X or 4X"
`, true},
		{"perfquery -r", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--dry-run", "-r", "2", "1"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, out), dryRunLocal, nil }
			return perfqueryRun(o)
		}, true, "PortXmitWait:....................0\n" +
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x01\n", true},
		{"perfquery -R -x", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--dry-run", "-R", "-x", "2", "1"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, out), dryRunLocal, nil }
			return perfqueryRun(o)
		}, true, "dry-run: PerfSet(PortCountersExtended) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x00001fff\n", false},
		{"ibclearerrors", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := fakeNetCheck(t, "ibclearerrors", []string{"--dry-run"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return netCheckRun(o)
		}, true, `dry-run: PerfSet(PortCounters) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0x0fff
dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0x0fff

*** WARNING ***: this command is deprecated; Please use "ibqueryerrors -k"

## Summary: 2 nodes cleared 0 errors
`, false},
		{"sminfo", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "sminfo", newSminfoCmd, []string{"--dry-run", "-p", "14", "1", "1"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, out), dryRunLocal, nil }
			return sminfoRun(o)
		}, true, `sminfo: sm lid 1 sm guid 0x200000, activity count 7 priority 1 state 3 SMINFO_MASTER
dry-run: SubnSet(SMInfo) from=madtest0/1 lid=1 attrmod=0x1 Priority=14 SMState=2
`, false},
		{"ibccconfig", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "ibccconfig", newIbccconfigCmd, []string{"--dry-run", "CongestionKeyInfo", "2", "0x1234", "1", "5", "0"})
			o.IO.Out = out
			o.Transactor = func() (*mad.Transactor, error) { return ff.transactor(&o.Common, out), nil }
			return ibccconfigRun(o)
		}, false, "dry-run: CCSet(CongestionKeyInfo) from=madtest0/1 lid=2 attrmod=0x0 CCKey=0x0000000000001234 CCKeyProtectBit=1 CCKeyLeasePeriod=5\n", false},
		{"ibsendtrap", func(t *testing.T, ff *dryRunFabric, out *bytes.Buffer) error {
			o := parsedOptions(t, "ibsendtrap", newIbsendtrapCmd, []string{"--dry-run", "local_link_integrity", "1"})
			o.IO.Out = out
			o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, out), dryRunLocal, nil }
			return ibsendtrapRun(o)
		}, true, "dry-run: SubnTrap(Notice) from=madtest0/1 lid=1 attrmod=0x0 IsGeneric=1 Type=1 ProducerType=\"Channel Adapter\" TrapNumber=129 IssuerLID=2 " +
			"DataDetails=000000020100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ff := &dryRunFabric{}
			var out bytes.Buffer
			if err := tt.run(t, ff, &out); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if ff.changes != 0 {
				t.Errorf("%d state-changing MADs reached the transport, want none", ff.changes)
			}
			if tt.wantGets && ff.gets == 0 {
				t.Errorf("no Get reached the transport")
			}
			got := out.String()
			if tt.suffix && strings.HasSuffix(got, tt.want) {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDryRunJSON checks the plans go into the tool's JSON document, and
// the reply a dry run makes up is not reported as done.
func TestDryRunJSON(t *testing.T) {
	ff := &dryRunFabric{}
	var out bytes.Buffer
	o := parsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--dry-run", "--json", "-R", "2", "1"})
	o.IO.Out = &out
	o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, &out), dryRunLocal, nil }
	if err := perfqueryRun(o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ResetPorts []int      `json:"resetPorts"`
		DryRun     []mad.Plan `json:"dryRun"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	one, ffff := uint64(1), uint64(0xffff)
	want := []mad.Plan{{Request: "PerfSet(PortCounters)", Device: "madtest0", Port: 1, Class: "PerfMgt", LID: 2,
		Attribute: "PortCounters", AttrID: mad.AttrPortCounters, Fields: []mad.PlannedField{
			{Name: "PortSelect", Value: &one, Text: "1"},
			{Name: "CounterSelect", Value: &ffff, Text: "0xffff"},
			{Name: "CounterSelect2", Value: &one, Text: "0x01"},
		}}}
	if diff := cmp.Diff(want, doc.DryRun); diff != "" {
		t.Errorf("unexpected dryRun (-want +got):\n%s", diff)
	}
	if doc.ResetPorts != nil || ff.changes != 0 {
		t.Errorf("resetPorts %v, %d Sets sent; want none", doc.ResetPorts, ff.changes)
	}
}

// TestDryRunOff checks that without --dry-run the Set goes out.
func TestDryRunOff(t *testing.T) {
	ff := &dryRunFabric{}
	var out bytes.Buffer
	o := parsedOptions(t, "ibportstate", newIbportstateCmd, []string{"2", "1", "down"})
	o.IO.Out = &out
	o.Open = func() (*mad.Transactor, *rdma.Port, error) { return ff.transactor(&o.Common, &out), dryRunLocal, nil }
	if err := ibportstateRun(o); err != nil {
		t.Fatal(err)
	}
	if ff.changes != 1 || !strings.Contains(out.String(), "After PortInfo set:") || strings.Contains(out.String(), "dry-run") {
		t.Errorf("%d Sets sent, output:\n%s\nwant one Set and the port after it", ff.changes, out.String())
	}
}

func TestDryRunSetNodedesc(t *testing.T) {
	tree := copyFixture(t, "mlx5")
	f, out, errOut := testFactory(nil)
	if code := Main([]string{"set_nodedesc", "--sysfs", tree, "--dry-run", "-C", "mlx5_1", "node17 HCA-2"}, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "dry-run: write file=" + tree + "/class/infiniband/mlx5_1/node_desc text=\"node17 HCA-2\" was=\"node01 mlx5_1\"\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}
	f, out, _ = testFactory(nil)
	if code := Main([]string{"set_nodedesc", "--sysfs", tree, "-v"}, f); code != 0 || !strings.Contains(out.String(), "mlx5_1: node01 mlx5_1\n") {
		t.Errorf("the description changed: exit %d, %q", code, out)
	}
}

func TestPlanLine(t *testing.T) {
	gid, _ := rdma.ParseGID("fe80::2:c903:0:1492")
	v := uint64(3)
	tests := []struct {
		plan mad.Plan
		want string
	}{
		{mad.Plan{Request: "SubnSet(PortInfo)", Device: "mlx5_0", Port: 1, LID: 4, DR: []int{0, 3}, AttrMod: 3,
			Fields: []mad.PlannedField{{Name: "LinkWidthEnabled", Value: &v, Text: "1X or 4X"}, {Name: "Data", Text: ""}, {Name: "S", Text: `a"b`}}},
			`dry-run: SubnSet(PortInfo) from=mlx5_0/1 lid=4 dr=0,3 attrmod=0x3 LinkWidthEnabled="1X or 4X" Data="" S="a\"b"` + "\n"},
		{mad.Plan{Request: "PerfSet(PortCounters)", Device: "ibsim0", GID: &gid}, "dry-run: PerfSet(PortCounters) from=ibsim0/0 gid=fe80::2:c903:0:1492 attrmod=0x0\n"},
		// A vendor class's request is one word on the line.
		{mad.Plan{Request: "Vendor1(0x0a) Set(ConfigSpaceAccess)", Device: "mlx5_0", Port: 1, LID: 6, AttrMod: 0x810000,
			Fields: []mad.PlannedField{{Name: "Data", Text: "0010013c"}}},
			"dry-run: Vendor1(0x0a)Set(ConfigSpaceAccess) from=mlx5_0/1 lid=6 attrmod=0x810000 Data=0010013c\n"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, string(appendPlanLine(nil, &tt.plan))); diff != "" {
			t.Errorf("unexpected line (-want +got):\n%s", diff)
		}
	}
}

func TestDryRunFlag(t *testing.T) {
	for _, tool := range []string{"init_all_ports", "set_port_state", "ibportstate", "perfquery", "sminfo", "ibccconfig", "ibsendtrap", "ibclearcounters", "ibclearerrors", "set_nodedesc", "ibqueryerrors", "vendstat"} {
		f, _, _ := testFactory(nil)
		c := ToolCommand(f, mustTool(t, tool))
		if c.Flags().Lookup("dry-run") == nil {
			t.Errorf("%s has no --dry-run", tool)
		}
	}
	for _, tool := range []string{"ibchecknet", "ibroute", "smpquery"} {
		f, _, _ := testFactory(nil)
		if c := ToolCommand(f, mustTool(t, tool)); c.Flags().Lookup("dry-run") != nil {
			t.Errorf("%s, which sends no Set, has --dry-run", tool)
		}
	}
}

func mustTool(t *testing.T, name string) Tool {
	t.Helper()
	tool, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}
