package fabric

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestCompressHostlist checks against what the script's compress_hostlist
// printed for the same lists (perl 5.36, rdma-core 44).
func TestCompressHostlist(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Hca1", " Hca1"},
		{"Hca1,Hca3", " Hca1 Hca3"},
		{"Hca1,Hca2,Hca3", " Hca1-3"},
		{"H-0001,H-0002,H-0003,H-0005", " H-0001-0003 H-0005"},
		{"b2,a1,a2,c", " a1-2 b2 c"},
		{"node,node,x10,x9,x11", " node node x9-11"},
		{"h01,h1,h2", " h01 h1-2"},
	}
	for _, tt := range tests {
		var hosts []string
		if tt.in != "" {
			hosts = strings.Split(tt.in, ",")
		}
		if got := compressHostlist(hosts); got != tt.want {
			t.Errorf("compressHostlist(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatScriptGUID(t *testing.T) {
	for in, want := range map[string]string{
		"0x200001": "0x0000000000200001", "0X2000AB": "0x000000000X2000ab", "Switch1": "0x000000000Switch1",
		"0x0002c90300a1b2c4": "0x0002c90300a1b2c4",
	} {
		if got := formatScriptGUID(in); got != want {
			t.Errorf("formatScriptGUID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRoutedHostsAll: -a (python-rdma's) keeps the switches and routers
// an ibroute dump routes out of the port; the script keeps the CAs.
func TestRoutedHostsAll(t *testing.T) {
	dump := []byte(`Unicast lids [0x0-0x4] of switch DR path slid 0; dlid 0; 0 guid 0x0000000000200000 (Switch0):
  Lid  Out   Destination
       Port     Info 
0x0001 001 : (Channel Adapter portguid 0x0000000000100001: 'Hca1')
0x0002 000 : (Switch portguid 0x0000000000200000: 'Switch0')
0x0003 001 : (Switch portguid 0x0000000000200001: 'Switch1')
0x0004 001 : (Router portguid 0x0000000000300001: 'Rtr1')
4 valid lids dumped 
`)
	for _, tt := range []struct {
		all  bool
		want []string
	}{
		{false, []string{"Hca1"}},
		{true, []string{"Hca1", "Switch1", "Rtr1"}},
	} {
		if diff := cmp.Diff(tt.want, routedHosts(dump, "1", tt.all)); diff != "" {
			t.Errorf("routedHosts(all %v): unexpected hosts (-want +got):\n%s", tt.all, diff)
		}
	}
}

// TestIbfindnodesusingSwitchTarget: -L, -G and -D (python-rdma's) read the
// switch argument as a LID, port GUID or DR path; a LID or DR path is
// asked its node GUID, which then names the switch.
func TestIbfindnodesusingSwitchTarget(t *testing.T) {
	tests := []struct {
		args       []string
		wantSwitch string
		wantErr    string
	}{
		{[]string{"0x200001", "3"}, "0x0000000000200001", ""},
		{[]string{"Switch1", "3"}, "0x000000000Switch1", ""},
		{[]string{"-G", "0x0000000000200001", "3"}, "0x0000000000200001", ""},
		{[]string{"--Guid", "0000:0000:0020:0001", "3"}, "0x0000000000200001", ""},
		{[]string{"-L", "7", "3"}, "0x00000000002000aa", ""},
		{[]string{"-D", "0,1", "3"}, "0x00000000002000aa", ""},
		{[]string{"-L", "0x0000000000200001", "3"}, "", "0x0000000000200001"},
		{[]string{"-G", "Switch1", "3"}, "", "Switch1"},
		{[]string{"--Direct", "7", "3"}, "", `"7"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *ibfindnodesusingOptions
			err := cmdtest.ParseToolArgs(t, "ibfindnodesusing", func(f *cmdutil.Factory) *cobra.Command {
				return newIbfindnodesusingCmd(f, func(o *ibfindnodesusingOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			var out bytes.Buffer
			got.IO.Out = &out
			got.CacheDir, got.Regenerate = t.TempDir(), true
			got.Topology = func() ([]byte, error) { return []byte("# no switches\n"), nil }
			got.SwitchGUID = func(endport.Target) (rdma.GUID, error) { return 0x2000aa, nil }
			if err := ibfindnodesusingRun(got); cmdutil.ExitCode(err) != cmdutil.ExitFindings {
				t.Fatalf("%v (exit %d), want exit %d: a switch not found", err, cmdutil.ExitCode(err), cmdutil.ExitFindings)
			}
			if want := fmt.Sprintf("Switch %q not found", tt.wantSwitch); !strings.HasPrefix(out.String(), want) {
				t.Errorf("output %q, want it to start %q", out.String(), want)
			}
		})
	}
}
