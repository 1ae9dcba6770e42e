package fabric

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func TestParseGUIDEdit(t *testing.T) {
	tests := []struct {
		in      string
		parts   int
		want    guidEdit
		wantErr string
	}{
		{in: "0x200000:0x200010", parts: 2, want: guidEdit{Before: 0x200000, After: 0x200010, set: true}},
		{in: "0x100000:0x100001:0x100011", parts: 3, want: guidEdit{Node: 0x100000, Before: 0x100001, After: 0x100011, set: true}},
		{in: "0x200000", parts: 2, wantErr: "want BEFOREGUID:AFTERGUID"},
		{in: "0x1:0x2", parts: 3, wantErr: "want NODEGUID:BEFOREGUID:AFTERGUID"},
		{in: "0x1:zz", parts: 2, wantErr: "zz"},
	}
	for _, tt := range tests {
		got, err := parseGUIDEdit(tt.in, tt.parts)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(guidEdit{})); diff != "" {
			t.Errorf("%q: unexpected edit (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestIbcacheeditRun edits a cache of the fake fabric and reads the new
// one back.
func TestIbcacheeditRun(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.cache")
	if err := cmdutil.SaveFabric(orig, fakeTwoSwitches(t, nil)); err != nil {
		t.Fatal(err)
	}
	// guids returns the node GUIDs of the fabric, and the port GUIDs of
	// its node with GUID of (a switch's ports all carry its GUID).
	guids := func(fab *subnet.Fabric, of rdma.GUID) (nodes, ports []rdma.GUID) {
		for _, n := range fab.All() {
			nodes = append(nodes, n.GUID)
			if n.GUID == of {
				for num := 1; num <= n.NumPorts; num++ {
					if p := n.Port(num); p != nil {
						ports = append(ports, p.GUID)
					}
				}
			}
		}
		return nodes, ports
	}
	tests := []struct {
		name      string
		args      []string
		of        rdma.GUID
		wantNodes []rdma.GUID
		wantPorts []rdma.GUID
		wantErr   string
	}{
		{name: "switch", args: []string{"--switchguid", "0x200001:0x2000ff"}, of: 0x2000ff,
			wantNodes: []rdma.GUID{0x200000, 0x2000ff, 0x100000, 0x100003, 0x100006, 0x100009},
			wantPorts: []rdma.GUID{0x2000ff, 0x2000ff, 0x2000ff, 0x2000ff, 0x2000ff, 0x2000ff, 0x2000ff, 0x2000ff}},
		{name: "ca", args: []string{"--caguid", "0x100003:0x1000ff"}, of: 0x1000ff,
			wantNodes: []rdma.GUID{0x200000, 0x200001, 0x100000, 0x1000ff, 0x100006, 0x100009},
			wantPorts: []rdma.GUID{0x100004}},
		{name: "port", args: []string{"--portguid", "0x100003:0x100004:0x1000ee"}, of: 0x100003,
			wantNodes: []rdma.GUID{0x200000, 0x200001, 0x100000, 0x100003, 0x100006, 0x100009},
			wantPorts: []rdma.GUID{0x1000ee}},
		{name: "no switch", args: []string{"--switchguid", "0x100000:0x2"}, wantErr: "switchguid = 100000 not found"},
		{name: "no node", args: []string{"--portguid", "0x9:0x100004:0x1"}, wantErr: "nodeguid = 9 not found"},
		{name: "no port", args: []string{"--portguid", "0x100003:0x9:0x1"}, wantErr: "portguid = 9 not found"},
		{name: "no sysimg", args: []string{"--sysimgguid", "0x9:0x1"}, wantErr: "sysimgguid = 9 not found"},
		{name: "bad flag", args: []string{"--caguid", "0x1"}, wantErr: "--caguid"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "new.cache"+string(rune('a'+i)))
			_, _, err := runWith(t, newIbcacheeditCmd, func(o *ibcacheeditOptions) error {
				return ibcacheeditRun(o)
			}, append(tt.args, orig, out)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fab, err := cmdutil.LoadFabric(out)
			if err != nil {
				t.Fatal(err)
			}
			nodes, ports := guids(fab, tt.of)
			if diff := cmp.Diff(tt.wantNodes, nodes, cmpopts.SortSlices(func(a, b rdma.GUID) bool { return a < b })); diff != "" {
				t.Errorf("unexpected node GUIDs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPorts, ports); diff != "" {
				t.Errorf("unexpected port GUIDs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIbcacheeditArgs checks that missing or extra cache files are usage
// errors: exit 2, the file named, and the hint to --help.
func TestIbcacheeditArgs(t *testing.T) {
	const hint = "Run 'ibcacheedit --help' for usage.\n"
	tests := []struct {
		args    []string
		wantErr string
	}{
		{nil, "ibcacheedit: original cache file not specified\n" + hint},
		{[]string{"--switchguid", "0x1:0x2"}, "ibcacheedit: original cache file not specified\n" + hint},
		{[]string{"old.cache"}, "ibcacheedit: new cache file not specified\n" + hint},
		{[]string{"a", "b", "c"}, "ibcacheedit: expected at most 2 argument(s), got 3: [\"c\"]\n" + hint},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := cmdutil.NewTestFactory(nil)
			code := cmdutil.RunTool(append([]string{"ibcacheedit"}, tt.args...), f)
			if code != cmdutil.ExitUsage {
				t.Errorf("exit code %d, want %d", code, cmdutil.ExitUsage)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
			if diff := cmp.Diff(tt.wantErr, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
		})
	}
}
