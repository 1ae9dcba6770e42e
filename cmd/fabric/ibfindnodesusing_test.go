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
	"github.com/ibtool/ibtool/pkg/mad"
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

// TestRoutedHosts: the CAs whose first LID a switch routes out of the
// port, by the names ibroute prints; -a (python-rdma's) keeps the
// switches and routers too. An LMC's further LIDs ("path #n"), invalid
// entries and other ports are left out.
func TestRoutedHosts(t *testing.T) {
	entries := []lftEntry{
		{LID: 1, Port: 1, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca1"},
		{LID: 2, Port: 1, Valid: true, text: ": (path #2 out of 2: portguid 0x0000000000100001)"},
		{LID: 3, Port: 0, Valid: true, described: true, destType: mad.NodeTypeSwitch, Dest: "Switch0"},
		{LID: 4, Port: 1, Valid: true, described: true, destType: mad.NodeTypeSwitch, Dest: "Switch1"},
		{LID: 5, Port: 1, Valid: true, described: true, destType: mad.NodeTypeRouter, Dest: "Rtr1"},
		{LID: 6, Port: 2, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca2"},
		{LID: 7, Port: 1, Valid: true, text: ": (unknown node and type)"},
		{LID: 8, Port: 1, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: ""},
		{LID: 9, Port: 0x101, Valid: false, text: ": (illegal port)"},
	}
	for _, tt := range []struct {
		port string
		all  bool
		want []string
	}{
		{"1", false, []string{"Hca1", ""}},
		{"1", true, []string{"Hca1", "Switch1", "Rtr1", ""}},
		{"001", false, []string{"Hca1", ""}},
		{"2", false, []string{"Hca2"}},
		// The script's port is a number: a word is port 0.
		{"x", true, []string{"Switch0"}},
		{"3", true, nil},
	} {
		if diff := cmp.Diff(tt.want, routedHosts(entries, tt.port, tt.all)); diff != "" {
			t.Errorf("routedHosts(port %s, all %v): unexpected hosts (-want +got):\n%s", tt.port, tt.all, diff)
		}
	}
}

// TestIbfindnodesusingRun runs the script on a kept topology of two
// switches and typed routes: the hosts routed out of Switch1's port 3 and
// back in through Switch2's port 1.
func TestIbfindnodesusingRun(t *testing.T) {
	topo := `Switch	4 "S-0000000000200001"		# "Switch1" base port 0 lid 1 lmc 0
[1]	"H-0000000000100001"[1](100001) 		# "Hca1" lid 3 4xSDR
[3]	"S-0000000000200002"[1]		# "Switch2" lid 2 4xSDR

Switch	4 "S-0000000000200002"		# "Switch2" base port 0 lid 2 lmc 0
[1]	"S-0000000000200001"[3]		# "Switch1" lid 1 4xSDR
[2]	"H-0000000000100003"[1](100003) 		# "Hca2" lid 5 4xSDR
`
	routes := map[string][]lftEntry{
		"0x0000000000200001": {
			{LID: 3, Port: 1, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca1"},
			{LID: 5, Port: 3, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca2"},
			{LID: 7, Port: 3, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca3"},
		},
		"0x0000000000200002": {
			{LID: 3, Port: 1, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca1"},
			{LID: 5, Port: 2, Valid: true, described: true, destType: mad.NodeTypeCA, Dest: "Hca2"},
		},
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	o := &ibfindnodesusingOptions{IO: cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, CacheDir: dir, Regenerate: true,
		Switch: "0x0000000000200001", Port: "3",
		Topology: func() ([]byte, error) { return []byte(topo), nil },
		Routes:   func(guid string) ([]lftEntry, error) { return routes[guid], nil },
	}
	if err := ibfindnodesusingRun(o); err != nil {
		t.Fatal(err)
	}
	want := `0x0000000000200001 3 ("Switch1" base)  ==>>  0x0000000000200002 1 (Switch2)
 Hca2-3

0x0000000000200001 3 ("Switch1" base)  <<==  0x0000000000200002 1 (Switch2)
 Hca1
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("unexpected output (-want +got):\n%s", diff)
	}
	if errOut.Len() != 0 {
		t.Errorf("unexpected errors: %s", errOut.String())
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
