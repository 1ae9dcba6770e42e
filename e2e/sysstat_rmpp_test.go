package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// fakeCPUInfo writes a /proc/cpuinfo of n processors and returns its path.
func fakeCPUInfo(t *testing.T, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: GenuineFake\nmodel name\t: Fake CPU %d @ 2.00GHz\ncpu MHz\t\t: %d.000\n\n", i, 1000+i, 2000+i)
	}
	p := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startWithCPUInfo starts argv as a server attached at simHost, with
// cpuinfo bind-mounted over /proc/cpuinfo in a mount namespace of its own
// (unshare -m; the test runs as root) and env added to the server's
// environment alone (LD_PRELOAD, not for the shell that mounts). It stops
// the server with SIGTERM when the test ends.
func startWithCPUInfo(t *testing.T, f *simfabric.Fabric, simHost, cpuinfo string, env []string, argv ...string) {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is needed: %v", err)
	}
	script := `mount --bind "$1" /proc/cpuinfo || exit 1; shift; exec env "$@"`
	cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", script, "sh", cpuinfo}, append(env, argv...)...)...)
	cmd.Env = append(os.Environ(), f.Env(simHost)...)
	cmd.Dir = t.TempDir() // the shim leaves a sys-<pid> directory here
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait() // infiniband-diags' server dies of the signal
		if strings.Contains(stderr.String(), "mount") {
			t.Errorf("%s: %s", argv[0], stderr.String())
		}
	})
	time.Sleep(500 * time.Millisecond) // attached by then
}

// TestSysstatCPUListRMPP asks for a 64-processor CPU list, longer than one
// MAD, from ibtool's server (which sends it with RMPP over the simulator
// itself) and from infiniband-diags' (segmented by the bench's RMPP
// layer): both clients print the whole list, the same.
func TestSysstatCPUListRMPP(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	cpuinfo := fakeCPUInfo(t, 64)
	startWithCPUInfo(t, f, "Hca3", cpuinfo, nil, ibtoolBin, "ibsysstat", "-S") // LID 5
	preload, err := simfabric.Preload()
	if err != nil {
		t.Fatal(err)
	}
	startWithCPUInfo(t, f, "Hca2", cpuinfo, []string{"LD_PRELOAD=" + preload, "RMPPSHIM_GUARD=1", "SIM_SET_ISSM=1"}, "/usr/sbin/ibsysstat", "-S") // LID 4
	var want strings.Builder
	for i := range 64 {
		fmt.Fprintf(&want, "cpu %d: model  Fake CPU %d @ 2.00GHz MHZ  %d.000\n", i, 1000+i, 2000+i)
	}
	want.WriteString("\n") // the list ends in a newline, and puts adds one
	for _, lid := range []string{"5", "4"} {
		t.Run("server at "+lid, func(t *testing.T) {
			sameAsReference(t, f, "Hca1", "ibsysstat", lid, "cpu")
			out, errOut, exit, err := f.RunIbtool(t.Context(), ibtoolBin, "Hca1", "ibsysstat", lid, "cpu")
			if err != nil || exit != 0 || string(out) != want.String() {
				t.Errorf("ibtool ibsysstat %s cpu: exit %d, %v, stderr %q; got %d bytes, want %d:\n%s", lid, exit, err, errOut, len(out), want.Len(), out)
			}
		})
	}
	// With MADs dropped at the client's port, segments and ACKs go
	// missing: the list arrives whole or the client fails in one line,
	// never with part of it.
	t.Run("drops", func(t *testing.T) {
		port := simfabric.Port("Hca1", 1)
		if err := f.SetErrorRate(t.Context(), port, 5, 0); err != nil {
			t.Fatal(err)
		}
		defer f.SetErrorRate(context.Background(), port, 0, 0)
		whole := 0
		for range 6 {
			out, errOut, exit, err := f.RunIbtool(t.Context(), ibtoolBin, "Hca1", "ibsysstat", "-t", "300", "--retries", "5", "5", "cpu")
			switch {
			case err != nil:
				t.Fatal(err)
			case exit == 0 && string(out) == want.String():
				whole++
			case exit == 3 && len(out) == 0 && strings.Count(string(errOut), "\n") == 1:
				t.Logf("failed cleanly: %s", errOut)
			default:
				t.Errorf("exit %d, %d bytes of %d, stderr %q", exit, len(out), want.Len(), errOut)
			}
		}
		if whole == 0 {
			t.Errorf("no run got the whole list through 5%% drops")
		}
	})
}
