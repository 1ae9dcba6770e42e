package e2e

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// startServer starts "ibtool TOOL -S" attached at simHost and stops it
// (SIGTERM) when the test ends; the server must then exit 0.
func startServer(t *testing.T, f *simfabric.Fabric, simHost, tool string) {
	t.Helper()
	cmd := exec.Command(ibtoolBin, tool, "-S")
	cmd.Env = f.Env(simHost)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s -S: %v: %s", tool, err, stderr.String())
		}
	})
	time.Sleep(300 * time.Millisecond) // attached by then
}

// pingTimes matches what moves from run to run in ibping's output.
var pingTimes = regexp.MustCompile(`time [0-9.]+ ms|rtt min/avg/max = \S+`)

// TestPingServers runs ibtool's ibping and ibsysstat servers (attached
// with the SM flag, as ibsim needs) and asks them from another node with
// both infiniband-diags' clients and ibtool's.
func TestPingServers(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	startServer(t, f, "Hca3", "ibsysstat") // Hca3 is LID 5
	for _, a := range [][]string{{"5"}, {"5", "ping"}, {"5", "host"}, {"5", "cpu"}, {"-o", "0x1405", "0x5", "host"}} {
		t.Run("ibsysstat "+strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", "ibsysstat", a...)
		})
	}
	startServer(t, f, "Hca2", "ibping") // Hca2 is LID 4
	mask := func(b []byte) []byte { return pingTimes.ReplaceAll(b, []byte("TIME")) }
	t.Run("ibping -c 2 4", func(t *testing.T) {
		sameAsReferenceMasked(t, f, mask, "Hca1", "ibping", "-c", "2", "4")
	})
	t.Run("ibping -c 2 -G 0x100004", func(t *testing.T) {
		sameAsReferenceMasked(t, f, mask, "Hca1", "ibping", "-c", "2", "-G", "0x100004")
	})
	t.Run("ibping -c 2 fe80::10:4", func(t *testing.T) {
		// infiniband-diags takes no GID: its LID form prints the same.
		sameOutput(t, f, "Hca1", mask, []string{"ibping", "-c", "2", "4"}, []string{"ibping", "-c", "2", "fe80::10:4"})
	})
	t.Run("ibping -f -c 50 4", func(t *testing.T) {
		out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibping", "-f", "-c", "50", "4")
		if err != nil || exit != 0 || !strings.Contains(string(out), "50 packets transmitted, 50 received, 0% packet loss") {
			t.Errorf("exit %d, %v, stdout %q, stderr %q", exit, err, out, errOut)
		}
	})
	t.Run("no server", func(t *testing.T) {
		out, _, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibping", "-c", "1", "-t", "100", "6")
		if err != nil || exit != 1 || !strings.Contains(string(out), "1 packets transmitted, 0 received, 100% packet loss") {
			t.Errorf("exit %d (want 1), %v, stdout %q", exit, err, out)
		}
		ibtoolFails(t, f, "Hca1", 3, "Vendor2(0x33) Get(ping) to Lid 6: no response after 3 tries", "ibsysstat", "-t", "100", "6")
	})
}
