package sa

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// fakeSA answers SubnAdmGetTable for NodeRecords (a switch at LID 1 and
// CAs at LIDs 2 and 3, filtered by LID when the mask asks) and PathRecords,
// in RMPP segments, and SubnAdmGet(ClassPortInfo). It keeps the requests.
type fakeSA struct {
	reqs []*mad.Packet
	rmpp madtest.RMPPResponder
	// every answers every other record type with one zero record.
	every bool
}

func newFakeSA() *fakeSA {
	s := &fakeSA{}
	s.rmpp = madtest.RMPPResponder{HdrLen: 56, Respond: s.respond}
	return s
}

func (s *fakeSA) handle(req *mad.Packet) []mad.Packet {
	if mad.Method(req.MAD[3]) == mad.MethodGet {
		s.reqs = append(s.reqs, req)
		cpi, _ := (&mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x2602,
			CapabilityMask2: 1 << 3, RespTimeValue: 0x12, RedirectQKey: 0x80010000}).MarshalBinary()
		return []mad.Packet{madtest.Reply(req, 0, 56, cpi)}
	}
	return s.rmpp.Handle(req)
}

func nodeRec(lid uint16, typ mad.NodeType, guid uint64, desc string) []byte {
	r := mad.NodeRecord{LID: lid, NodeInfo: mad.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: typ, NumPorts: 2,
		SystemImageGUID: rdma.GUID(guid), NodeGUID: rdma.GUID(guid), PortGUID: rdma.GUID(guid + 1), PartitionCap: 64,
		DeviceID: 0xa25b, Revision: 0xa1, LocalPortNum: 1, VendorID: 0x2c9}}
	copy(r.NodeDescription.NodeDescription[:], desc)
	b, _ := r.MarshalBinary()
	return b
}

func (s *fakeSA) respond(req *mad.Packet) []byte {
	s.reqs = append(s.reqs, req)
	var sah mad.SAHeader
	_ = sah.UnmarshalBinary(req.MAD)
	mask := sah.ComponentMask
	tmpl := req.MAD[56:]
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	switch h.AttrID {
	case mad.AttrNodeRecord:
		var recs [][]byte
		for _, r := range [][]byte{
			nodeRec(1, 2, 0x200000, "Switch1"),
			nodeRec(2, 1, 0x100000, "Hca1"),
			nodeRec(3, 1, 0x100003, "Hca2"),
		} {
			var nr, want mad.NodeRecord
			nr.UnmarshalBinary(r)
			want.UnmarshalBinary(tmpl)
			if mask&1 == 0 || nr.LID == want.LID {
				recs = append(recs, r)
			}
		}
		return madtest.SAResponse(req, 0, 112, recs...)
	case mad.AttrPathRecord:
		var asked mad.PathRecord
		asked.UnmarshalBinary(tmpl)
		pr, _ := (&mad.PathRecord{DLID: asked.DLID, SLID: asked.SLID, SL: 3}).MarshalBinary()
		return madtest.SAResponse(req, 0, 64, pr)
	}
	if s.every {
		for _, l := range mad.SALayouts {
			if l.ID == h.AttrID {
				return madtest.SAResponse(req, 0, (l.Size+7)/8*8, nil)
			}
		}
	}
	return madtest.SAResponse(req, 0x0c00, 8) // an SA status of 12: unknown
}

// saqueryOpts parses saquery's arguments into options whose transactor
// talks to the fake SA.
func saqueryOpts(t *testing.T, sa *fakeSA, args ...string) (*saqueryOptions, error) {
	t.Helper()
	var o *saqueryOptions
	err := cmdtest.ParseToolArgs(t, "saquery", func(f *cmdutil.Factory) *cobra.Command {
		return newSaqueryCmd(f, func(opts *saqueryOptions) error { o = opts; return nil })
	}, args)
	if err != nil {
		return nil, err
	}
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		opts := o.Common.TransactorOptions()
		opts.Timeout = 50 * time.Millisecond
		opts.SA = &madrpc.SAAddress{SMLID: 1}
		return madrpc.NewTransactor(madtest.New(sa.handle), opts), &rdma.Port{Number: 1, LID: 2, SMLID: 1}, nil
	}
	o.Common.Ctx = context.Background()
	return o, nil
}

func runSaquery(t *testing.T, sa *fakeSA, args ...string) (string, error) {
	t.Helper()
	o, err := saqueryOpts(t, sa, args...)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	o.IO.Out = &out
	err = saqueryRun(o)
	return out.String(), err
}

const hca1Record = `NodeRecord dump:
		lid.....................2
		reserved................0x0
		base_version............0x1
		class_version...........0x1
		node_type...............Channel Adapter
		num_ports...............2
		sys_guid................0x0000000000100000
		node_guid...............0x0000000000100000
		port_guid...............0x0000000000100001
		partition_cap...........0x40
		device_id...............0xA25B
		revision................0xA1
		port_num................1
		vendor_id...............0x2C9
		NodeDescription.........Hca1
`

func TestSaquery(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     string
		wantMask uint64
	}{
		{"NodeRecord of a LID", []string{"NR", "2"}, hca1Record, 1},
		{"NodeRecord by default", []string{"2"}, hca1Record, 1},
		{"NodeRecord of a name", []string{"Hca1"}, hca1Record, 1},
		// python-rdma's MEMBER=VALUE adds selectors to the argument's.
		{"NodeRecord by member", []string{"NR", "2", "nodeInfo.portGUID=0x100001"}, hca1Record, 1 | 1<<8},
		{"-D", []string{"-D"}, "   LID \"name\"\n================\n     2  \"Hca1\"\n     3  \"Hca2\"\n", 0},
		{"-L", []string{"-L", "Hca2"}, "3\n", 0},
		{"-G", []string{"-G", "Hca2"}, "0x0000000000100004\n", 0},
		{"-O", []string{"-O", "1"}, "Switch1\n", 0},
		{"-U", []string{"-U", "0x100001"}, "Hca1\n", 0},
		{"-c", []string{"-c"}, `SA ClassPortInfo:
		Base version.............1
		Class version............2
		Capability mask..........0x2602
		Capability mask 2........0x00000008
		Response time value......0x12
		Redirect GID.............::
		Redirect TC/SL/FL........0x00000000
		Redirect LID.............0
		Redirect PKey............0x0000
		Redirect QP..............0x00000000
		Redirect QKey............0x80010000
		Trap GID.................::
		Trap TC/SL/FL............0x00000000
		Trap LID.................0
		Trap PKey................0x0000
		Trap HL/QP...............0x00000000
		Trap QKey................0x00000000
`, 0},
		// --src-to-dst resolves names through the NodeRecords; the
		// PathRecord selects SLID, DLID and NumbPath 0x7f.
		{"--src-to-dst", []string{"--src-to-dst", "Hca1:3"}, `PathRecord dump:
		service_id..............0x0000000000000000
		dgid....................::
		sgid....................::
		dlid....................3
		slid....................2
		hop_flow_raw............0x0
		tclass..................0x0
		num_path_revers.........0x0
		pkey....................0x0
		qos_class...............0x0
		sl......................0x3
		mtu.....................0x0
		rate....................0x0
		pkt_life................0x0
		preference..............0x0
		resv2...................0x000000000000
`, 1<<4 | 1<<5 | 1<<12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sa := newFakeSA()
			got, err := runSaquery(t, sa, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			last := sa.reqs[len(sa.reqs)-1]
			var sah mad.SAHeader
			_ = sah.UnmarshalBinary(last.MAD)
			if got := sah.ComponentMask; got != tt.wantMask {
				t.Errorf("last request's component mask %#x, want %#x", got, tt.wantMask)
			}
		})
	}
}

func TestSaqueryErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-L"}, "ERROR: name not specified"},
		{[]string{"-O"}, "ERROR: lid not specified"},
		{[]string{"-O", "0"}, "ERROR: lid invalid"},
		{[]string{"--slid", "x"}, `invalid --slid "x": want a decimal number or 0x and hex digits`},
		{[]string{"--sgid-to-dgid", "fe80::1"}, `invalid --sgid-to-dgid "fe80::1": want <sgid>-<dgid>`},
		{[]string{"NR", "nosuch"}, `failed to find lid for "nosuch": no NodeRecord has that description`},
		{[]string{"BogusRecord"}, `unknown record "BogusRecord"; 'saquery --help' lists the query names (for a node described so: saquery -N BogusRecord)`},
		{[]string{"nodeinfo", "12"}, `unknown record "nodeinfo"; 'saquery --help' lists the query names (for a node described so: saquery -N nodeinfo)`},
		{[]string{"NR", "0"}, `Invalid lid specified: "0"`},
		{[]string{"SR"}, "SubnAdmGetTable(ServiceRecord) to Lid 1: MAD status 0x0c00: SA status 12"},
		{[]string{"-N", "LID=2"}, `LID=2: MEMBER=VALUE selects the fields of a record query (NR, PIR, PR, ...)`},
		{[]string{"NR", "nodeInfo.nosuch=1"}, `NodeRecord has no member "nodeInfo.nosuch"; its members: LID, nodeInfo.baseVersion, nodeInfo.classVersion, nodeInfo.nodeType, nodeInfo.numPorts, nodeInfo.systemImageGUID, nodeInfo.nodeGUID, nodeInfo.portGUID, nodeInfo.partitionCap, nodeInfo.deviceID, nodeInfo.revision, nodeInfo.localPortNum, nodeInfo.vendorID, nodeDescription.nodeString`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := runSaquery(t, newFakeSA(), tt.args...)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestSaqueryRecordNames checks which first arguments are query names,
// which are node descriptions (as infiniband-diags takes any other word),
// and which are record names saquery does not know: those are usage
// errors found before any device is looked for.
func TestSaqueryRecordNames(t *testing.T) {
	for _, tt := range []struct {
		arg  string
		want bool
	}{
		{"BogusRecord", true},
		{"bogusrecord", true},
		{"NodeInfo", true},
		{"Port2Info", true},
		{"Record", false},
		{"info", false},
		{"Hca1", false},
		{"host-info", false},
		{"2Record", false},
	} {
		if got := isRecordName(tt.arg); got != tt.want {
			t.Errorf("isRecordName(%q) = %v, want %v", tt.arg, got, tt.want)
		}
	}
	for _, name := range []string{"NodeRecord", "NR", "ClassPortInfo", "GUIDInfoRecord", "SMInfoRecord"} {
		if findSAQuery(name) == nil {
			t.Errorf("%s is no query; isRecordName would refuse it", name)
		}
	}

	// -N keeps the word a node description, as infiniband-diags has it:
	// no node has it, nothing is printed.
	if out, err := runSaquery(t, newFakeSA(), "-N", "BogusRecord"); err != nil || out != "" {
		t.Errorf("-N BogusRecord: %q, %v; want nothing printed", out, err)
	}

	f, out, errOut := cmdutil.NewTestFactory(map[string]string{"IBTOOL_SYSFS": t.TempDir()})
	code := cmdutil.RunTool([]string{"saquery", "BogusRecord"}, f)
	const want = "saquery: unknown record \"BogusRecord\"; 'saquery --help' lists the query names (for a node described so: saquery -N BogusRecord)\n"
	if code != cmdutil.ExitUsage || out.Len() != 0 {
		t.Errorf("exit code %d, stdout %q; want %d and nothing", code, out, cmdutil.ExitUsage)
	}
	if diff := cmp.Diff(want, errOut.String()); diff != "" {
		t.Errorf("unexpected stderr (-want +got):\n%s", diff)
	}
}
