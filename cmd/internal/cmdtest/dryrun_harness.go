package cmdtest

import (
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// DryRunPortInfo is the PortInfo every port of dryRunFabric has: an
// Active 4X SDR port of LID 2 whose SM is at LID 1.
var DryRunPortInfo = mad.PortInfo{LID: 2, SMLID: 1, LocalPortNum: 1, LinkState: mad.PortStateActive, PhysLinkState: 5,
	LinkWidthEnabled: 2, LinkWidthSupported: 3, LinkWidthActive: 2,
	LinkSpeedSupported: 1, LinkSpeedEnabled: 1, LinkSpeedActive: 1, MKeyLeasePeriod: 15}

// DryRunFabric answers Gets as one CA (Hca1's NodeInfo, dryRunPortInfo,
// an SM, a PMA with AllPortSelect) would, and counts the requests by
// whether their method changes state.
type DryRunFabric struct {
	mu            sync.Mutex
	gets, Changes int
}

func (ff *DryRunFabric) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	ff.mu.Lock()
	if h.Method.ChangesState() {
		ff.Changes++
	} else {
		ff.gets++
	}
	ff.mu.Unlock()
	var data []byte
	switch {
	case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrNodeInfo:
		data, _ = hex.DecodeString(Hca1NodeInfo)
	case h.MgmtClass.IsSMP() && h.AttrID == mad.AttrPortInfo:
		data, _ = DryRunPortInfo.MarshalBinary()
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

// Transactor returns a transactor on the fake with o's options, dry run
// included, the plans' lines going to out.
func (ff *DryRunFabric) Transactor(o *cmdutil.CommonOptions, out io.Writer) *madrpc.Transactor {
	return FakeTransactor(o, ff.handle, 50*time.Millisecond, out)
}

// DryRunLocal is the local port of the fake: Hca1's port 1, LID 2.
var DryRunLocal = &rdma.Port{Number: 1, LID: 2, SMLID: 1}

// ParsedOptions parses a tool's arguments and returns its options.
func ParsedOptions[O any](t *testing.T, name string, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args []string) *O {
	t.Helper()
	var got *O
	err := ParseToolArgs(t, name, func(f *cmdutil.Factory) *cobra.Command {
		return newCmd(f, func(o *O) error { got = o; return nil })
	}, args)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// DryRunFakeFabric is a discovered fabric for init_all_ports and
// set_port_state: Hca1 port 1 cabled to port 1 of an 8-port switch, Hca2
// port 1 to its port 2; every cabled port Active.
func DryRunFakeFabric() *subnet.Fabric {
	raw, _ := DryRunPortInfo.MarshalBinary()
	port := func(n *subnet.Node, num int) *subnet.Port {
		pi := DryRunPortInfo
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

// DryRunCase is one tool run with --dry-run against a dryRunFabric.
type DryRunCase struct {
	Name string
	Run  func(t *testing.T, ff *DryRunFabric, out *bytes.Buffer) error
	// wantGets says the tool reads the fabric.
	WantGets bool
	// want is the whole output, or its end when suffix is set.
	Want   string
	Suffix bool
}

// NewDryRunCase is a dryRunCase, field by field.
func NewDryRunCase(name string, run func(t *testing.T, ff *DryRunFabric, out *bytes.Buffer) error, wantGets bool, want string, suffix bool) DryRunCase {
	return DryRunCase{Name: name, Run: run, WantGets: wantGets, Want: want, Suffix: suffix}
}

// RunDryRunCases runs each case against a fresh fake: the Gets reach it, no
// Set or Trap does, and stdout has what was read and the plan.
func RunDryRunCases(t *testing.T, tests []DryRunCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			ff := &DryRunFabric{}
			var out bytes.Buffer
			if err := tt.Run(t, ff, &out); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if ff.Changes != 0 {
				t.Errorf("%d state-changing MADs reached the transport, want none", ff.Changes)
			}
			if tt.WantGets && ff.gets == 0 {
				t.Errorf("no Get reached the transport")
			}
			got := out.String()
			if tt.Suffix && strings.HasSuffix(got, tt.Want) {
				return
			}
			if diff := cmp.Diff(tt.Want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// FakeTransactor returns a transactor on a madtest fake that answers with
// h: o's options (-t, --retries, --sa, --dry-run) but the timeout given,
// the plans of a dry run going to out.
func FakeTransactor(o *cmdutil.CommonOptions, h madtest.Handler, timeout time.Duration, out io.Writer) *madrpc.Transactor {
	opts := o.TransactorOptions()
	opts.Timeout = timeout
	o.SetDryRun(out, &opts)
	return madrpc.NewTransactor(madtest.New(h), opts)
}

// FakeOpen is FakeTransactor as CommonOptions.Open gives it, with no local
// port.
func FakeOpen(o *cmdutil.CommonOptions, h madtest.Handler, timeout time.Duration, out io.Writer) func() (*madrpc.Transactor, *rdma.Port, error) {
	return func() (*madrpc.Transactor, *rdma.Port, error) {
		return FakeTransactor(o, h, timeout, out), nil, nil
	}
}
