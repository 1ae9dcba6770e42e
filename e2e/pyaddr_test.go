package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// On the two-switch fabric, from Hca1 (LID 2, port GUID 0x100001):
// Switch1 (0x200000) is LID 1 and DR 0,1; Switch2 (0x200001) LID 3 and DR
// 0,1,3; Hca2 (port GUID 0x100004) LID 4 and DR 0,1,3,1; Hca3 LID 5 and
// DR 0,1,2.

// dataCounters matches the counter lines other tests' MADs move.
var dataCounters = regexp.MustCompile(`(?m)^(Port(Xmit|Rcv)(Data|Pkts)|PortXmitWait):\.*\d+$`)

// TestPythonRdmaAddressFlags checks python-rdma's address and discovery
// options (-G, --Lid, --Direct, --discovery, --cache, the counter-set
// spellings) against infiniband-diags' forms for the same thing.
func TestPythonRdmaAddressFlags(t *testing.T) {
	f := smallFabric(t)
	dir := t.TempDir()
	routeCache, traceCache := filepath.Join(dir, "ibroute.cache"), filepath.Join(dir, "ibtracert.cache")
	tests := []struct {
		name      string
		ref, ours []string
	}{
		{"smpdump -G", []string{"smpdump", "4", "0x11"}, []string{"smpdump", "-G", "0x0000000000100004", "0x11"}},
		{"smpdump --Guid", []string{"smpdump", "3", "0x15", "1"}, []string{"smpdump", "--Guid", "0x200001", "0x15", "1"}},
		{"ibaddr --Lid", []string{"ibaddr", "4"}, []string{"ibaddr", "--Lid", "4"}},
		{"perfquery -F", []string{"perfquery", "--flowctlcounters", "3", "1"}, []string{"perfquery", "-F", "3", "1"}},
		{"perfquery --flow", []string{"perfquery", "--flowctlcounters", "3", "1"}, []string{"perfquery", "--flow", "3", "1"}},
		{"perfquery --vl-xmit-errs", []string{"perfquery", "--vlxmitflowctlerrors", "3", "1"}, []string{"perfquery", "--vl-xmit-errs", "3", "1"}},
		{"perfquery --vl-xmit-wait", []string{"perfquery", "--vlxmitcounters", "3", "1"}, []string{"perfquery", "--vl-xmit-wait", "3", "1"}},
		{"perfquery --Direct", []string{"perfquery", "3", "1"}, []string{"perfquery", "--Direct", "0,1,3", "1"}},
		{"ibroute --discovery sa", []string{"ibroute", "1"}, []string{"ibroute", "--discovery", "SA", "1"}},
		// Twice: the first run discovers and writes the cache, the
		// second names the destinations from it.
		{"ibroute --cache", []string{"ibroute", "3"}, []string{"ibroute", "--cache", routeCache, "3"}},
		{"ibroute --cache again", []string{"ibroute", "3"}, []string{"ibroute", "--cache", routeCache, "3"}},
		{"ibtracert --discovery lid", []string{"ibtracert", "2", "4"}, []string{"ibtracert", "--discovery", "lid", "2", "4"}},
		{"ibtracert --cache", []string{"ibtracert", "2", "4"}, []string{"ibtracert", "--cache", traceCache, "2", "4"}},
		{"ibtracert --cache again", []string{"ibtracert", "2", "4"}, []string{"ibtracert", "--cache", traceCache, "--discovery", "lid", "2", "4"}},
		{"ibtracert -L one address", []string{"ibtracert", "2", "4"}, []string{"ibtracert", "-L", "4"}},
		{"ibtracert -D one address", []string{"ibtracert", "2", "4"}, []string{"ibtracert", "-D", "0,1,3,1"}},
		{"dump_lfts -D", []string{"dump_lfts"}, []string{"dump_lfts", "-D"}},
		{"dump_mfts -D", []string{"dump_mfts"}, []string{"dump_mfts", "-D"}},
		// -R: discover the topology afresh rather than read the kept one.
		{"ibfindnodesusing -L", []string{"ibfindnodesusing", "-R", "0x200001", "3"}, []string{"ibfindnodesusing", "-R", "-L", "3", "3"}},
		{"ibfindnodesusing -D", []string{"ibfindnodesusing", "-R", "0x200001", "3"}, []string{"ibfindnodesusing", "-R", "-D", "0,1,3", "3"}},
		{"ibfindnodesusing -G", []string{"ibfindnodesusing", "-R", "0x200001", "3"}, []string{"ibfindnodesusing", "-R", "-G", "0x0000000000200001", "3"}},
	}
	mask := func(b []byte) []byte { return dataCounters.ReplaceAll(b, []byte("${1}:N")) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sameOutput(t, f, "Hca1", mask, tt.ref, tt.ours)
		})
	}
	t.Run("iblinkinfo -L and --Guid", func(t *testing.T) {
		// infiniband-diags' -S scans from the port by combined routes,
		// which ibsim does not carry; -L and --Guid print what ibtool's
		// -S prints (TestIblinkinfoByGUID checks that against the full
		// report).
		ctx := context.Background()
		want, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo", "-S", "0x200001")
		if err != nil || !bytes.HasPrefix(want, []byte("Switch: 0x0000000000200001 Switch2:\n")) {
			t.Fatalf("iblinkinfo -S 0x200001: %v\n%s", err, want)
		}
		for _, args := range [][]string{{"-L", "3"}, {"--Lid", "3"}, {"--Guid", "0x200001"}} {
			got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo", args...)
			if err != nil || exit != 0 || len(errOut) != 0 {
				t.Fatalf("iblinkinfo %q: exit %d, %v, %s", args, exit, err, errOut)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("iblinkinfo %q differs from -S (-want +got):\n%s", args, simfabric.Diff(want, got))
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, `"4"`, "smpdump", "-G", "4", "0x11")
		ibtoolFails(t, f, "Hca1", 2, `"0,1"`, "ibaddr", "--Lid", "0,1")
		ibtoolFails(t, f, "Hca1", 2, `"3"`, "perfquery", "--Direct", "3", "1")
		ibtoolFails(t, f, "Hca1", 2, "cannot go with --discovery dr", "ibroute", "--sa", "--discovery", "dr", "1")
		ibtoolFails(t, f, "Hca1", 2, "cannot go with --discovery lid", "dump_lfts", "-D", "--discovery", "lid")
	})
}

// TestPythonRdmaDirectGMP checks -D/--Direct on ibping and ibsysstat: the
// DR path is followed to its LID through the SA, and the servers answer
// as at that LID.
func TestPythonRdmaDirectGMP(t *testing.T) {
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	startServer(t, f, "Hca3", "ibsysstat") // LID 5, DR 0,1,2
	t.Run("ibsysstat -D", func(t *testing.T) {
		sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, []string{"ibsysstat", "5", "host"}, []string{"ibsysstat", "-D", "0,1,2", "host"})
	})
	startServer(t, f, "Hca2", "ibping") // LID 4, DR 0,1,3,1
	mask := func(b []byte) []byte { return pingTimes.ReplaceAll(b, []byte("TIME")) }
	t.Run("ibping --Direct", func(t *testing.T) {
		sameOutput(t, f, "Hca1", mask, []string{"ibping", "-c", "2", "4"}, []string{"ibping", "-c", "2", "--Direct", "0,1,3,1"})
	})
	t.Run("ibping DR without -D", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "ping MADs are LID routed", "ibping", "-c", "1", "0,1,3,1")
	})
}

// TestPythonRdmaSwportwatch checks ibswportwatch's python-rdma options on
// the fabric: --count polls that many times, --Direct and -L reach the
// port the LID form does.
func TestPythonRdmaSwportwatch(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"--delta", "--count", "2", "-p", "0.2", "3", "1"},
		{"--delta", "--count", "2", "-p", "0.2", "--Direct", "0,1,3", "1"},
		{"--delta", "--count", "2", "-p", "0.2", "-L", "3", "1"},
		{"--threshold", "--count", "2", "-p", "0.2", "3", "1"},
	} {
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibswportwatch", args...)
		if err != nil || exit != 0 || len(errOut) != 0 {
			t.Fatalf("ibswportwatch %q: exit %d, %v, %s", args, exit, err, errOut)
		}
		if n := strings.Count(string(out), "# Port counters: Lid 3 port 1\n"); n != 2 {
			t.Errorf("ibswportwatch %q: %d polls of Lid 3 port 1, want 2:\n%s", args, n, out)
		}
		if args[0] == "--delta" && !strings.Contains(string(out), "\nSymbolErrorCounter.....") {
			t.Errorf("ibswportwatch %q shows no counters:\n%s", args, out)
		}
	}
}
