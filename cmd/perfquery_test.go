package cmd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

func TestParsePortList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"1", []int{1}, ""},
		{"0x10", []int{16}, ""},
		{"010", []int{10}, ""},
		{"1,4,8", []int{1, 4, 8}, ""},
		{"1-4", []int{1, 2, 3, 4}, ""},
		{"4-1", nil, `invalid port range "4-1"`},
		{"3-3", nil, `invalid port range "3-3"`},
		{"1,x", nil, `invalid port number "x"`},
		{"256", nil, "out of range 0 to 255"},
		{"1-256", nil, "out of range 0 to 255"},
		{"", nil, `invalid port number ""`},
		{"1,", nil, `invalid port number ""`},
	}
	for _, tt := range tests {
		got, err := parsePortList(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ExitCode(err) != ExitUsage {
				t.Errorf("parsePortList(%q) = %v, %v; want usage error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parsePortList(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parsePortList(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseMask(t *testing.T) {
	for in, want := range map[string]uint64{"0x0fff": 0xfff, "61440": 0xf000, "0xffffffffffffffff": ^uint64(0)} {
		if got, err := parseMask(in); err != nil || got != want {
			t.Errorf("parseMask(%q) = %#x, %v; want %#x", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0x", "-1", "+1", "0x1g", "0x10000000000000000"} {
		if _, err := parseMask(in); err == nil {
			t.Errorf("parseMask(%q): no error", in)
		}
	}
}

func TestPerfqueryArgs(t *testing.T) {
	tests := []struct {
		args      []string
		wantPort  int
		wantPorts []int
		wantMask  uint32
		wantErr   string
	}{
		{nil, 0, nil, 0xffff, ""},
		{[]string{"-a", "3"}, 255, nil, 0xffff, ""},
		{[]string{"-a", "3", "2"}, 2, nil, 0xffff, ""},
		{[]string{"3", "1-3", "0x0fff"}, 1, []int{1, 2, 3}, 0x0fff, ""},
		{[]string{"-D", "3", "1"}, 1, nil, 0xffff, ""},
		{[]string{"3", "1", "zz"}, 0, nil, 0, `invalid reset mask "zz"`},
		{[]string{"-G", "3"}, 0, nil, 0, `-G given but "3" is a LID`},
		{[]string{"3", "1", "2", "4"}, 0, nil, 0, "expected at most 3 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *perfqueryOptions
			err := parseToolArgs(t, "perfquery", func(f *Factory) *cobra.Command {
				return newPerfqueryCmd(f, func(o *perfqueryOptions) error { got = o; return nil })
			}, tt.args)
			if !checkParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Port != tt.wantPort || !cmp.Equal(got.Ports, tt.wantPorts) || got.Mask != tt.wantMask {
				t.Errorf("port %d ports %v mask %#x; want %d %v %#x", got.Port, got.Ports, got.Mask, tt.wantPort, tt.wantPorts, tt.wantMask)
			}
		})
	}
}

// TestKernelTransportNoDevices checks a machine without RDMA devices is a
// runtime failure for a MAD tool (exit 3), and a named local port that is
// not there a usage error (exit 2).
func TestKernelTransportNoDevices(t *testing.T) {
	empty := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"perfquery", "--sysfs", empty, "1", "1"}, ExitFailure},
		{[]string{"perfquery", "--sysfs", empty, "-C", "mlx5_0", "1", "1"}, ExitUsage},
	} {
		f, _, errOut := testFactory(nil)
		if code := Main(tt.args, f); code != tt.code || !strings.Contains(errOut.String(), "no RDMA devices") {
			t.Errorf("%q: exit %d, %q; want %d", tt.args, code, errOut, tt.code)
		}
	}
}
