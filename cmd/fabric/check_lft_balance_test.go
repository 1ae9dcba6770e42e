package fabric

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// TestCheckLFTBalanceRun checks the fake fabric's routes from its
// dump_lfts output and an ibnetdiscover cache of it.
func TestCheckLFTBalanceRun(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	dir := t.TempDir()
	lfts, cache := filepath.Join(dir, "lfts"), filepath.Join(dir, "fabric.cache")
	dump, _, err := runDumpFts(t, ff, fab, "dump_lfts")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lfts, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmdutil.SaveFabric(cache, fab); err != nil {
		t.Fatal(err)
	}
	// The same fabric with the routes to Hca4 and Hca3 over the second
	// link between the switches.
	sw1, sw2 := ff.Node("Switch1"), ff.Node("Switch2")
	sw1.LFT[9], sw1.LFT[10], sw2.LFT[7], sw2.LFT[8] = 5, 5, 5, 5
	balanced := filepath.Join(dir, "lfts-balanced")
	if dump, _, err = runDumpFts(t, ff, fab, "dump_lfts"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(balanced, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantErr  string
		wantCode int
	}{
		{name: "verbose", args: []string{"-v", "-l", lfts, "-i", cache}},
		{name: "quiet", args: []string{"-l", lfts, "-i", cache}},
		{name: "balanced", args: []string{"-v", "-l", balanced, "-i", cache}},
		{name: "balanced-quiet", args: []string{"-l", balanced, "-i", cache}},
		{name: "heuristic", args: []string{"-e", "-v", "-l", lfts, "-i", cache}},
		{name: "no-lfts", args: []string{"-i", cache}, wantErr: "must specify dump lfts file (-l)", wantCode: cmdutil.ExitUsage},
		{name: "no-cache", args: []string{"-l", lfts}, wantErr: "must specify ibnetdiscover cache (-i)", wantCode: cmdutil.ExitUsage},
		{name: "missing-lfts", args: []string{"-l", filepath.Join(dir, "none"), "-i", cache}, wantErr: "couldn't open dump lfts file", wantCode: cmdutil.ExitUsage},
		{name: "missing-cache", args: []string{"-l", lfts, "-i", filepath.Join(dir, "none")}, wantErr: "loading cached fabric", wantCode: cmdutil.ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runWith(t, newCheckLFTBalanceCmd, func(o *checkLFTBalanceOptions) error {
				return checkLFTBalanceRun(o)
			}, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cmdutil.ExitCode(err) != tt.wantCode {
					t.Errorf("error %v (exit %d), want exit %d with %q", err, cmdutil.ExitCode(err), tt.wantCode, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "check_lft_balance", tt.name+".golden"), out)
		})
	}
}

func TestPerlNum(t *testing.T) {
	for in, want := range map[string]int{"3": 3, "003": 3, " 12x": 12, "Hca2": 0, "": 0, "-4": -4, "1node": 1} {
		if got := perlNum(in); got != want {
			t.Errorf("perlNum(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestPortLines: the ports whose iblinkinfo line the script's pattern
// for a port finds: ports 1-9 only themselves, ports 10 and up also the
// three-digit ports that end in them.
func TestPortLines(t *testing.T) {
	n := &subnet.Node{NumPorts: 112}
	n.Ports = make([]*subnet.Port, n.NumPorts+1)
	for _, num := range []int{1, 10, 11, 21, 110, 112} {
		n.Ports[num] = &subnet.Port{Node: n, Num: num}
	}
	tests := []struct {
		port string
		want []int
	}{
		{"001", []int{1}},
		{"010", []int{10, 110}},
		{"011", []int{11}},
		{"012", []int{112}},
		{"002", nil},
	}
	for _, tt := range tests {
		var got []int
		for _, p := range portLines(n, tt.port) {
			got = append(got, p.Num)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("portLines(%s): unexpected ports (-want +got):\n%s", tt.port, diff)
		}
	}
	if got := portLines(nil, "001"); got != nil {
		t.Errorf("portLines of no switch: %v, want none", got)
	}
}

// TestLineHas checks lineHas against the iblinkinfo line itself: for
// every port of the cached fake fabric, with a port down and a far end
// whose name holds the words, the typed test and a grep of the rendered
// line agree.
func TestLineHas(t *testing.T) {
	fab := fakeTwoSwitches(t, nil)
	var ports []*subnet.Port
	for _, n := range fab.Nodes {
		for num := 1; num <= n.NumPorts; num++ {
			if p := n.Port(num); p != nil {
				ports = append(ports, p)
			}
		}
	}
	if len(ports) < 4 {
		t.Fatalf("only %d ports in the fake fabric", len(ports))
	}
	down := *ports[0].Info
	down.LinkState = mad.PortStateDown
	ports[0].Info = &down
	ports[1].Remote.Node.Desc = "Downtown Active rack"
	ports[2].Info = nil
	for _, p := range ports {
		line := string((&subnet.LinkLine{}).AppendPort(nil, p, ""))
		for _, word := range []string{"Down", "Active"} {
			if got, want := lineHas(p, word), strings.Contains(line, word); got != want {
				t.Errorf("lineHas(%s port %d, %q) = %v, want %v: %q", p.Node.Desc, p.Num, word, got, want, line)
			}
		}
	}
}
