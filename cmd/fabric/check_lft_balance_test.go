package fabric

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
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

func TestPortLines(t *testing.T) {
	info := "Switch: 0x1 s:\n           3    1[  ] ==( 4X 2.5 Gbps Active/  LinkUp)==>  x\n           3   11[  ] ==(   Down/ Polling)==>  y\n           3   10[  ] ==( Down)==> z\n"
	if got := portLines(info, "001"); len(got) != 1 || !strings.Contains(got[0], "Active") {
		t.Errorf("port 001: %q", got)
	}
	if got := portLines(info, "010"); len(got) != 1 || !strings.Contains(got[0], "z") {
		t.Errorf("port 010: %q", got)
	}
	if got := portLines(info, "002"); len(got) != 0 {
		t.Errorf("port 002: %q", got)
	}
}
