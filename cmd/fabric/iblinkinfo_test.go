package fabric

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// runIblinkinfo runs iblinkinfo with args on a discovered fabric.
func runIblinkinfo(t *testing.T, fab *subnet.Fabric, args ...string) string {
	t.Helper()
	f, out, _ := cmdutil.NewTestFactory(nil)
	c := newIblinkinfoCmd(f, func(o *iblinkinfoOptions) error {
		o.Discover = func([]uint8, int) (*subnet.Fabric, error) { return fab, nil }
		return iblinkinfoRun(o)
	})
	if err := execFabricCmd(c, args); err != nil {
		t.Fatalf("iblinkinfo %v: %v", args, err)
	}
	return out.String()
}

func TestIblinkinfoArgs(t *testing.T) {
	tests := []struct {
		args    []string
		want    mad.NodeType
		wantErr string
	}{
		{args: []string{"--switches-only"}, want: mad.NodeTypeSwitch},
		{args: []string{"--cas-only"}, want: mad.NodeTypeCA},
		{args: nil, want: 0},
		{args: []string{"--switches-only", "--cas-only"}, wantErr: "--switches-only and --cas-only: give one"},
		{args: []string{"-n", "-1"}, wantErr: "invalid hops -1"},
		{args: []string{"-D", "0,1", "-S", "0x10"}, wantErr: "-D and -S name the node to print; give one"},
	}
	for _, tt := range tests {
		var got *iblinkinfoOptions
		err := cmdtest.ParseToolArgs(t, "iblinkinfo", func(f *cmdutil.Factory) *cobra.Command {
			return newIblinkinfoCmd(f, func(o *iblinkinfoOptions) error { got = o; return nil })
		}, tt.args)
		if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
			continue
		}
		if got.Only != tt.want {
			t.Errorf("iblinkinfo %v: Only = %v, want %v", tt.args, got.Only, tt.want)
		}
	}
}

// TestIblinkinfoLines checks iblinkinfo's port lines on the two-switch
// fabric: a narrowed link says what it could be, -d keeps the down ones.
func TestIblinkinfoLines(t *testing.T) {
	fab := fakeTwoSwitches(t, func(ff *subnettest.Fabric) { ff.Node("Hca2").Ports[1].Width = mad.LinkWidth1X })
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-S", "0x0000000000100004", "-l"}, "0x0000000000100004 \"                          Hca2\"      5    1[  ] ==( 1X           2.5 Gbps Active/  LinkUp)==>  0x0000000000200001      2    1[  ] \"Switch2\" (Could be 4X )\n"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, runIblinkinfo(t, fab, tt.args...)); diff != "" {
			t.Errorf("iblinkinfo %v (-want +got):\n%s", tt.args, diff)
		}
	}
}
