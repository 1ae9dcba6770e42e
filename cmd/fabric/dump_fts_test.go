package fabric

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// runDumpFts runs the tool named name on the fake's discovered fabric.
func runDumpFts(t *testing.T, ff *subnettest.Fabric, fab *subnet.Fabric, name string, args ...string) (string, string, error) {
	t.Helper()
	multicast := strings.HasPrefix(name, "dump_mfts")
	return runWith(t, func(f *cmdutil.Factory, runF func(*dumpFtsOptions) error) *cobra.Command {
		return newDumpFtsCmd(f, name, multicast, runF)
	}, func(o *dumpFtsOptions) error {
		o.Discover = func() (*subnet.Fabric, error) { return fab, nil }
		o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
		return dumpFtsRun(o)
	}, args...)
}

// TestDumpFtsRun dumps every switch's tables of the fake fabric.
func TestDumpFtsRun(t *testing.T) {
	tests := []struct {
		name, tool string
		args       []string
	}{
		{"unicast", "dump_fts", nil},
		{"all", "dump_fts", []string{"-a"}},
		{"brief-range", "dump_fts", []string{"-n", "2", "5"}},
		{"multicast", "dump_fts", []string{"-M"}},
		{"multicast-brief", "dump_fts", []string{"-M", "-n"}},
		{"dump_lfts", "dump_lfts", nil},
		{"dump_mfts", "dump_mfts.sh", []string{"-v"}},
	}
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := runDumpFts(t, ff, fab, tt.tool, tt.args...)
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			if errOut != "" {
				t.Errorf("unexpected stderr: %s", errOut)
			}
			cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "dump_fts", tt.name+".golden"), out)
		})
	}
}

// TestDumpFtsFailedReads: a switch that stops answering after discovery
// is left out with its error on stderr, the others are dumped, and the
// exit status is a runtime failure.
func TestDumpFtsFailedReads(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	ff.Node("Switch2").Dead = true
	out, errOut, err := runDumpFts(t, ff, fab, "dump_fts", "-n")
	if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitFailure {
		t.Errorf("error %v (exit %d), want a runtime failure", err, cmdutil.ExitCode(err))
	}
	if !strings.Contains(errOut, `dump_fts: switch 0x0000000000200001 "Switch2" (DR path 0,1,3)`) {
		t.Errorf("stderr does not name the switch: %s", errOut)
	}
	cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "dump_fts", "dead-switch.golden"), out)
}

// TestDumpFtsDRDiscovery: python-rdma's -D of dump_lfts and dump_mfts
// discovers by directed route, and cannot go with another discovery.
func TestDumpFtsDRDiscovery(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantMode string
		wantErr  string
	}{
		{"dump_lfts", []string{"-D"}, "dr", ""},
		{"dump_mfts", []string{"-D", "--discovery", "DR"}, "dr", ""},
		{"dump_lfts.sh", []string{"-D"}, "dr", ""},
		{"dump_lfts", []string{"-D", "--discovery", "lid"}, "", "cannot go with --discovery lid"},
		{"dump_mfts", []string{"-D", "--sa"}, "", "cannot go with --sa"},
		{"dump_fts", []string{"-D"}, "", "unknown shorthand flag: 'D'"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			var got *dumpFtsOptions
			err := cmdtest.ParseToolArgs(t, tt.name, func(f *cmdutil.Factory) *cobra.Command {
				return newDumpFtsCmd(f, tt.name, strings.HasPrefix(tt.name, "dump_mfts"), func(o *dumpFtsOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Discovery.Mode != tt.wantMode {
				t.Errorf("--discovery %q, want %q", got.Discovery.Mode, tt.wantMode)
			}
		})
	}
}
