package ibsim

import (
	"os"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
)

// The device view from the shim's start-up replies must equal the tree the
// shim wrote from the same replies (testdata/README says how it was taken).
func TestSysFSMatchesShimCapture(t *testing.T) {
	for _, host := range []string{"Hca1", "Switch1"} {
		t.Run(host, func(t *testing.T) {
			a := capturedAttach(t, host)
			want, err := readTree(os.DirFS("testdata/sysfs-" + host))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readTree(a.SysFS())
			if err != nil {
				t.Fatal(err)
			}
			delete(want, ".")
			delete(got, ".")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected tree (-shim +ours):\n%s", diff)
			}
		})
	}
}

func TestSysFSIsAnFS(t *testing.T) {
	a := capturedAttach(t, "Hca1")
	if err := fstest.TestFS(a.SysFS(),
		"class/infiniband/ibsim0/node_type",
		"class/infiniband/ibsim0/ports/1/gids/0",
		"class/infiniband/ibsim0/ports/1/pkeys/31",
		"class/infiniband_mad/umad0/ibdev",
		"class/infiniband_mad/issm0/port",
		"class/infiniband_mad/abi_version"); err != nil {
		t.Error(err)
	}
}

func TestShimRate(t *testing.T) {
	tests := []struct {
		name              string
		width, speed, ext uint8
		capMask           uint32
		want              string
	}{
		{"4X SDR", 2, 1, 0, 0, "10 Gb/sec (4X)"},
		{"1X SDR", 1, 1, 0, 0, "2.5 Gb/sec (1X)"},
		{"4X DDR", 2, 2, 0, 0, "20 Gb/sec (4X DDR)"},
		{"12X QDR", 8, 4, 0, 0, "120 Gb/sec (12X QDR)"},
		{"8X QDR", 4, 4, 0, 0, "80 Gb/sec (8X QDR)"},
		{"width code 16 counts as 0", 16, 1, 0, 0, "0 Gb/sec (0X)"},
		{"speed code 3 is 7.5 a lane", 1, 3, 0, 0, "7.5 Gb/sec (1X)"},
		{"ext speed ignored without cap bit", 2, 1, 1, 0, "10 Gb/sec (4X)"},
		{"4X FDR", 2, 1, 1, CapMaskExtSpeeds, "56 Gb/sec (4X FDR)"},
		{"4X EDR", 2, 1, 2, CapMaskExtSpeeds, "104 Gb/sec (4X EDR)"},
		{"4X HDR still 26 a lane", 2, 1, 4, CapMaskExtSpeeds, "104 Gb/sec (4X HDR)"},
		{"ext code 8 unnamed", 2, 1, 8, CapMaskExtSpeeds, "104 Gb/sec (4X)"},
		{"ext 0 falls back", 2, 2, 0, CapMaskExtSpeeds, "20 Gb/sec (4X DDR)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pi := PortInfo{LinkWidthActive: tt.width, LinkSpeedActive: tt.speed,
				LinkSpeedExtActive: tt.ext, CapMask: tt.capMask}
			if got := shimRate(&pi); got != tt.want {
				t.Errorf("rate %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSysFSStateNames(t *testing.T) {
	tests := []struct {
		state, phys uint8
		wantState   string
		wantPhys    string
	}{
		{0, 0, "0: NOP\n", "0: <unknown>\n"},
		{1, 1, "1: DOWN\n", "1: Sleep\n"},
		{3, 3, "3: ARMED\n", "3: Disabled\n"},
		{4, 4, "4: ACTIVE\n", "4: PortConfigurationTraining\n"},
		{5, 6, "5: ACTIVE_DEFER\n", "6: LinkErrorRecovery\n"},
		{6, 7, "6: <unknown>\n", "7: Phy Test\n"},
		{15, 8, "15: <unknown>\n", "8: <unknown>\n"},
	}
	for _, tt := range tests {
		a := AttachInfo{PortInfo: PortInfo{State: tt.state, PhysState: tt.phys, LocalPort: 1}}
		tree, err := readTree(a.SysFS())
		if err != nil {
			t.Fatal(err)
		}
		got := [2]string{tree["class/infiniband/ibsim0/ports/1/state"], tree["class/infiniband/ibsim0/ports/1/phys_state"]}
		if want := [2]string{tt.wantState, tt.wantPhys}; got != want {
			t.Errorf("state %d phys %d: got %q, want %q", tt.state, tt.phys, got, want)
		}
	}
}

func TestSysFSNodeTypes(t *testing.T) {
	for typ, want := range map[mad.NodeType]string{1: "1: CA\n", 2: "2: SWITCH\n", 3: "3: ROUTER\n", 0x1a: "1a: <unknown>\n"} {
		a := AttachInfo{NodeInfo: NodeInfo{NodeType: typ}}
		tree, err := readTree(a.SysFS())
		if err != nil {
			t.Fatal(err)
		}
		if got := tree["class/infiniband/ibsim0/node_type"]; got != want {
			t.Errorf("node type %d: got %q, want %q", typ, got, want)
		}
	}
}
