package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// The reference for ibtool's ibcheck* and ibprint* tools is rdma-core
// v44's deprecated scripts (testdata/ibdiags-scripts), configured as
// rdma-core's build tree does: the scripts in lib/ with @IBSCRIPTPATH@ set
// to bin/, which holds a /bin/bash (or perl) wrapper for each and links to
// the C tools in /usr/sbin. They run under the shim as the C tools do.

// ibdiagsScripts configures the scripts in a temporary directory and
// returns its bin/ directory; the Perl scripts keep their topology in
// cacheDir.
func ibdiagsScripts(t *testing.T, cacheDir string) string {
	t.Helper()
	dir := t.TempDir()
	lib, bin := filepath.Join(dir, "lib"), filepath.Join(dir, "bin")
	for _, d := range []string{lib, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join("testdata", "ibdiags-scripts")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		name := e.Name()
		var wrapper string
		switch {
		case strings.HasSuffix(name, ".in"):
			name = strings.TrimSuffix(name, ".in")
			b = bytes.ReplaceAll(b, []byte("@IBSCRIPTPATH@"), []byte(bin))
			wrapper = fmt.Sprintf("#!/bin/bash\nexec /bin/bash %s \"$@\"\n", filepath.Join(lib, name))
		case strings.HasSuffix(name, ".pl"):
			wrapper = fmt.Sprintf("#!/bin/bash\nPERL5LIB=%s exec /usr/bin/perl %s \"$@\"\n", lib, filepath.Join(lib, name))
			name = strings.TrimSuffix(name, ".pl")
		case name == "IBswcountlimits.pm":
			b = bytes.Replace(b, []byte(`"/var/cache/infiniband-diags"`), []byte(`"`+cacheDir+`"`), 1)
		default:
			continue
		}
		if err := os.WriteFile(filepath.Join(lib, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name(), ".in") {
			os.Rename(filepath.Join(lib, e.Name()), filepath.Join(lib, name))
		}
		if wrapper != "" {
			if err := os.WriteFile(filepath.Join(bin, name), []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tool := range []string{"ibnetdiscover", "smpquery", "perfquery", "ibaddr"} {
		if err := os.Symlink(filepath.Join("/usr/sbin", tool), filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// netNarrow is the two-switch fabric with Hca3's link at 1X, which
// ibcheckwidth reports on the switch's side (it supports 4X).
var netNarrow = bytes.Replace(bytes.Replace(simfabric.Net2sw2path4hca,
	[]byte("Hca\t2 \"Hca3\"\n[1]\t\"Switch1\"[2]"), []byte("Hca\t2 \"Hca3\"\n[1]\t\"Switch1\"[2]\t# lid 0 1xSDR"), 1),
	[]byte("[2]\t\"Hca3\"[1]"), []byte("[2]\t\"Hca3\"[1]\t# lid 0 1xSDR"), 1)

// ibcheckFabric starts netNarrow with error counters set on a few ports;
// prepare sets them again.
func ibcheckFabric(t *testing.T) (*simfabric.Fabric, func()) {
	t.Helper()
	if bytes.Equal(netNarrow, simfabric.Net2sw2path4hca) {
		t.Fatal("netNarrow: the net file did not change")
	}
	f, prepare := countersFabric(t, netNarrow, []counterSet{
		{"Switch1", 3, "PortCounters.SymbolErrorCounter", 15},
		{"Hca2", 1, "PortCounters.PortRcvErrors", 3},
		{"Hca3", 1, "PortCounters.LinkDownedCounter", 11},
		{"Switch2", 5, "PortCounters.PortXmitDiscards", 200},
	})
	prepare()
	return f, prepare
}

// scriptMask hides what differs between the two on purpose: the receive
// data counters, which the tools' own MADs move, and the C tools' path in
// the error lines the scripts pass on.
func scriptMask(bin string) func([]byte) []byte {
	data := regexp.MustCompile(`(PortRcv(Data|Pkts)):\.+\d+`)
	return func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(bin+"/"), []byte("/usr/sbin/"))
		return data.ReplaceAll(b, []byte("$1:X"))
	}
}

// sameAsScript runs the script and ibtool's tool with args at host and
// fails t unless both exit with the same code and print the same.
func sameAsScript(t *testing.T, f *simfabric.Fabric, bin, host, tool string, ibtoolArgs []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	want, wantErr, wantExit, err := f.RunReference(ctx, host, filepath.Join(bin, tool), args...)
	if err != nil {
		t.Fatal(err)
	}
	got, gotErr, gotExit, err := f.RunIbtool(ctx, ibtoolBin, host, tool, append(append([]string{}, ibtoolArgs...), args...)...)
	if err != nil {
		t.Fatal(err)
	}
	mask := scriptMask(bin)
	if gotExit != wantExit {
		t.Errorf("ibtool %s %q: exit %d, the script %d (stderr %q, script's %q)", tool, args, gotExit, wantExit, gotErr, wantErr)
	}
	if !bytes.Equal(mask(want), mask(got)) {
		t.Errorf("ibtool %s %q differs from the script (-want +got):\n%s", tool, args, simfabric.Diff(mask(want), mask(got)))
	}
}

func TestIBCheckMatchesScripts(t *testing.T) {
	f, prepare := ibcheckFabric(t)
	bin := ibdiagsScripts(t, t.TempDir())
	thres := filepath.Join(t.TempDir(), "thresholds")
	if err := os.WriteFile(thres, []byte("LinkDownedCounter=20\nPortRcvErrors=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"ibchecknode", "1"}, {"ibchecknode", "-v", "1"}, {"ibchecknode", "-v", "-N", "99"}, {"ibchecknode", "-v", "-G", "0x100001"},
		{"ibchecknode", "-G", "0x100000"},
		{"ibcheckport", "-v", "1", "1"}, {"ibcheckport", "-v", "2", "2"}, {"ibcheckport", "2", "4"}, {"ibcheckport", "-v", "-nocolor", "-G", "0x100001", "1"},
		{"ibcheckport", "-v", "1", "2"},
		{"ibcheckportstate", "-v", "2", "2"}, {"ibcheckportstate", "1", "1"},
		{"ibcheckportwidth", "-v", "1", "2"}, {"ibcheckportwidth", "-N", "1", "2"}, {"ibcheckportwidth", "-v", "1", "1"},
		{"ibcheckerrs", "1"}, {"ibcheckerrs", "-v", "1", "3"}, {"ibcheckerrs", "-b", "5", "1"}, {"ibcheckerrs", "-v", "4"},
		{"ibcheckerrs", "-s"}, {"ibcheckerrs", "-T", thres, "-s"}, {"ibcheckerrs", "-v", "-T", thres, "4", "1"}, {"ibcheckerrs", "-N", "-T", thres, "5", "1"},
		{"ibcheckerrs", "-v", "1", "9"}, {"ibcheckerrs", "-N", "-v", "3", "5"},
		{"ibdatacounts", "-v", "4", "1"}, {"ibdatacounts", "1"}, {"ibdatacounts", "-v", "4"},
		{"ibchecknet"}, {"ibchecknet", "-v"}, {"ibchecknet", "-N"},
		{"ibcheckerrors"}, {"ibcheckerrors", "-v", "-N"}, {"ibcheckerrors", "-b"},
		{"ibcheckstate"}, {"ibcheckstate", "-v"},
		{"ibcheckwidth"}, {"ibcheckwidth", "-v", "-N"},
		{"ibdatacounters", "-N"}, {"ibdatacounters", "-b"}, {"ibdatacounters", "-v", "-N"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			sameAsScript(t, f, bin, "Hca1", c[0], nil, c[1:]...)
		})
	}
	t.Run("topology file", func(t *testing.T) {
		topo := filepath.Join(t.TempDir(), "topo")
		out, _, _, err := f.RunReference(context.Background(), "Hca1", "ibnetdiscover")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(topo, append(out, "ibwarn: a message kept in the file\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		sameAsScript(t, f, bin, "Hca1", "ibcheckstate", nil, "-v", topo)
		sameAsScript(t, f, bin, "Hca1", "ibchecknet", nil, topo)
	})
	for _, tool := range []string{"ibclearerrors", "ibclearcounters"} {
		t.Run(tool, func(t *testing.T) {
			// Each clears the counters prepare set; ibcheckerrors then
			// finds nothing.
			for _, run := range []func(ctx context.Context, args ...string) ([]byte, []byte, int, error){
				func(ctx context.Context, args ...string) ([]byte, []byte, int, error) {
					return f.RunReference(ctx, "Hca1", filepath.Join(bin, args[0]), args[1:]...)
				},
				func(ctx context.Context, args ...string) ([]byte, []byte, int, error) {
					return f.RunIbtool(ctx, ibtoolBin, "Hca1", args[0], args[1:]...)
				},
			} {
				prepare()
				ctx := context.Background()
				out, errOut, exit, err := run(ctx, tool)
				if err != nil || exit != 0 || !bytes.Contains(out, []byte("## Summary: 6 nodes cleared 0 errors")) {
					t.Errorf("%s: exit %d, %v, stdout %q, stderr %q", tool, exit, err, out, errOut)
				}
				out, _, _, _ = run(ctx, "ibcheckerrors")
				if !bytes.Contains(out, []byte("0 ports have errors beyond threshold")) {
					t.Errorf("after %s: %q", tool, out)
				}
			}
			prepare()
		})
	}
	t.Run("findings", func(t *testing.T) {
		// The fabric gives each kind of check something to find.
		for _, c := range []struct {
			want string
			args []string
		}{
			{"2 ports with 1x width in error found", []string{"ibcheckwidth"}},
			{"#warn: Link configured as 1X  lid 1 port 2", []string{"ibcheckport", "-N", "1", "2"}},
			{"#error: Physical link state is Polling  lid 2 port 2", []string{"ibcheckportstate", "-N", "2", "2"}},
			{"3 ports have errors beyond threshold", []string{"ibchecknet"}},
		} {
			out, _, _, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", c.args[0], c.args[1:]...)
			if err != nil || !bytes.Contains(out, []byte(c.want)) {
				t.Errorf("%q: %v, %q; want %q", c.args, err, out, c.want)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		out, _, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibchecknet", "--json")
		if err != nil || exit == 0 || !bytes.Contains(out, []byte(`"portsWithErrors": 3`)) {
			t.Errorf("ibchecknet --json: exit %d, %v, %s", exit, err, out)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			msg  string
			args []string
		}{
			{"want <lid|guid> <port>", []string{"ibcheckport", "1"}},
			{"can't use threshold file", []string{"ibcheckerrs", "-T", "/nonexistent", "1"}},
			{"unknown shorthand flag", []string{"ibchecknet", "-x"}},
			{"want at most one topology file", []string{"ibcheckstate", "a", "b"}},
			{"want a node name", []string{"ibprintswitch"}},
		} {
			out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", c.args[0], c.args[1:]...)
			if err != nil || exit != 2 || len(out) != 0 || !strings.HasPrefix(string(errOut), c.args[0]+": ") || !strings.Contains(string(errOut), c.msg) {
				t.Errorf("%q: exit %d, %v, stdout %q, stderr %q; want exit 2 and %q", c.args, exit, err, out, errOut, c.msg)
			}
		}
	})
}

func TestIBPrintMatchesScripts(t *testing.T) {
	f := smallFabric(t)
	scriptCache, ours := t.TempDir(), t.TempDir()
	bin := ibdiagsScripts(t, scriptCache)
	cache := []string{"--cache-dir", ours}
	for _, c := range [][]string{
		{"ibprintca", "-R", "Hca1"}, {"ibprintca", "-G", "0x100000"}, {"ibprintca", "-l"}, {"ibprintca", "Hca[12]"},
		{"ibprintca", "nothere"}, {"ibprintswitch", "Switch2"}, {"ibprintswitch", "Switch1"}, {"ibprintswitch", "-G", "0x200001"},
		{"ibprintswitch", "-l"}, {"ibprintrt", "-l"}, {"ibprintrt", "Router"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			if c[1] == "-l" {
				// The scripts exit 1 after a list; ibtool 0.
				ctx := context.Background()
				want, _, wantExit, err := f.RunReference(ctx, "Hca1", filepath.Join(bin, c[0]), c[1:]...)
				if err != nil || wantExit != 1 {
					t.Fatalf("script: exit %d, %v", wantExit, err)
				}
				got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", c[0], append(cache, c[1:]...)...)
				if err != nil || exit != 0 || !bytes.Equal(got, want) {
					t.Errorf("exit %d, %v, %q; output (-want +got):\n%s", exit, err, errOut, simfabric.Diff(want, got))
				}
				return
			}
			sameAsScript(t, f, bin, "Hca1", c[0], cache, c[1:]...)
		})
	}
	t.Run(".pl names", func(t *testing.T) {
		sameAsScript(t, f, bin, "Hca1", "ibprintca", append(cache, "--json=false"), "Hca2")
		out, _, exit, err := f.RunCommand(context.Background(), "Hca1", filepath.Join(linkDir, "ibprintca.pl"), "--cache-dir", ours, "Hca2")
		if err != nil || exit != 0 || !bytes.HasPrefix(out, []byte("Ca\t2 \"H-0000000000100003\"")) {
			t.Errorf("ibprintca.pl: exit %d, %v, %q", exit, err, out)
		}
	})
}
