package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// perfFabric starts a fabric of its own for the perfquery tests: the
// counters they read move with every MAD, so no other test may send any
// while they run. LIDs (from opensm): Switch1 1, Hca1 2, Switch2 3, Hca2 4,
// Hca3 5, Hca4 6.
func perfFabric(t *testing.T) (*simfabric.Fabric, func()) {
	t.Helper()
	f := simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	// prepare resets every cabled port's counters, then sets a few error
	// counters, so each run starts from the same state.
	prepare := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, args := range [][]string{
			{"-R", "1", "1-8"}, {"-R", "3", "1-8"},
			{"-R", "2", "1"}, {"-R", "4", "1"}, {"-R", "5", "1"}, {"-R", "6", "1"},
		} {
			if out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "perfquery", args...); err != nil || exit != 0 {
				t.Fatalf("perfquery %q: exit %d, %v: %s%s", args, exit, err, out, errOut)
			}
		}
		setCounters(t, f, []counterSet{
			{"Hca1", 1, "PortCounters.SymbolErrorCounter", 5},
			{"Switch2", 1, "PortCounters.LinkDownedCounter", 3},
			{"Switch2", 2, "PortCounters.LinkDownedCounter", 250},
			{"Switch2", 3, "PortCounters.LinkDownedCounter", 200}, // -a adds up to 255 at most
			{"Switch2", 1, "PortCounters.VL15Dropped", 7},         // QP1Dropped shows it too
			{"Switch2", 2, "PortCounters.LocalLinkIntegrityErrors", 9},
			{"Switch2", 3, "PortCounters.LocalLinkIntegrityErrors", 9}, // 4 bits: 15
			{"Hca2", 1, "PortRcvErrorDetails.PortVLMappingErrors", 4},
		})
		// ibsim's PortCountersExtended reset leaves PortRcvPkts alone, so
		// set the extended traffic counters the -x runs read instead.
		ports := []simfabric.PortRef{simfabric.Port("Hca1", 1)}
		for p := 1; p <= 8; p++ {
			ports = append(ports, simfabric.Port("Switch2", p))
		}
		for i, p := range ports {
			for j, field := range []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"} {
				if err := f.PerformanceSet(ctx, p, "PortCountersExtended."+field, uint64(1000*(i+1)+j)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return f, prepare
}

// TestPerfqueryMatchesReference compares perfquery in every mode ibsim
// answers, on counters reset and set the same way before each run.
func TestPerfqueryMatchesReference(t *testing.T) {
	f, prepare := perfFabric(t)
	tests := []struct {
		host string
		args []string
	}{
		{"Hca1", nil},
		{"Hca1", []string{"2", "1"}},
		{"Hca1", []string{"-x", "2", "1"}},
		{"Hca1", []string{"-a", "3"}},
		{"Hca1", []string{"-a", "-x", "3"}},
		{"Hca1", []string{"-x", "3", "255"}},
		{"Hca1", []string{"-l", "3"}},
		{"Hca1", []string{"3", "1,2"}},
		{"Hca1", []string{"-a", "3", "1-3"}},
		{"Hca1", []string{"-l", "3", "1-3"}},
		{"Hca1", []string{"-x", "-l", "3", "1,3"}},
		{"Hca1", []string{"-a", "1", "1,2,3"}},
		{"Hca1", []string{"-l", "-a", "1"}},
		{"Hca1", []string{"-D", "2", "1"}},
		{"Hca1", []string{"-E", "4", "1"}},
		{"Hca1", []string{"--oprcvcounters", "2", "1"}},
		{"Hca1", []string{"--flowctlcounters", "3", "1"}},
		{"Hca1", []string{"-r", "2", "1"}},
		{"Hca1", []string{"-x", "-r", "3", "1"}},
		{"Hca1", []string{"-R", "-a", "3"}},
		{"Hca1", []string{"-t", "500", "0x3", "0x1"}},
		{"Switch2", nil},
		{"Switch2", []string{"1", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.host+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			if len(tt.args) > 0 && tt.args[0] == "-R" {
				// -R prints nothing: check it resets, then the output after.
				prepare()
				out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, tt.host, "perfquery", tt.args...)
				if err != nil || exit != 0 || len(out) != 0 || len(errOut) != 0 {
					t.Fatalf("ibtool perfquery %q: exit %d, %v, stdout %q, stderr %q", tt.args, exit, err, out, errOut)
				}
				again := func() {
					if _, _, exit, err := f.RunIbtool(context.Background(), ibtoolBin, tt.host, "perfquery", tt.args...); err != nil || exit != 0 {
						t.Fatalf("ibtool perfquery %q: exit %d, %v", tt.args, exit, err)
					}
				}
				sameAsReferenceAfter(t, f, again, tt.host, "perfquery", "-l", "3", "1-3")
				return
			}
			sameAsReferenceAfter(t, f, prepare, tt.host, "perfquery", tt.args...)
		})
	}
}

// TestPerfqueryErrors checks the failures are one line with the right exit
// code where infiniband-diags fails.
func TestPerfqueryErrors(t *testing.T) {
	f, prepare := perfFabric(t)
	prepare()
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "PerfGet(PortCounters) to Lid 2: MAD status 0x001c: invalid attribute or modifier value", []string{"2"}},
		{3, "cannot query PortXmitDataSL: PerfGet(PortXmitDataSL) to Lid 2: no response after 3 tries", []string{"-X", "2", "1"}},
		{3, "PerfGet(PortSamplesControl) to Lid 2: no response after 2 tries", []string{"--retries", "1", "-c", "2", "1"}},
		{3, "PerfGet(ClassPortInfo) to Lid 200: no response after 3 tries", []string{"-t", "50", "200", "1"}},
		{2, "target 0,1: performance MADs are LID routed; give a LID", []string{"0,1"}},
		{2, `invalid port range "2-1"`, []string{"2", "2-1"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "perfquery", tt.args...)
		})
	}
}

// TestFatTreePerfquery compares perfquery on a leaf switch of the 36-port
// fat tree, its ports' counters reset and set the same way before each run.
func TestFatTreePerfquery(t *testing.T) {
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 48, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	f := simfabric.StartForTest(t, simfabric.Options{Net: net})
	ctx := context.Background()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "H-0001", "ibaddr", "-L", "0,1")
	if err != nil || exit != 0 {
		t.Fatalf("ibaddr: exit %d, %v: %s", exit, err, errOut)
	}
	leaf := strings.Fields(string(out))[2] // "LID start N end N"
	prepare := func() {
		t.Helper()
		if _, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "H-0001", "perfquery", "-R", leaf, "1-36"); err != nil || exit != 0 {
			t.Fatalf("reset: exit %d, %v: %s", exit, err, errOut)
		}
		for p := 1; p <= 36; p++ {
			port := simfabric.Port("S-leaf-1", p)
			for j, field := range []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"} {
				if err := f.PerformanceSet(ctx, port, "PortCountersExtended."+field, uint64(100*p+j)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := f.PerformanceSet(ctx, simfabric.Port("S-leaf-1", 20), "PortCounters.SymbolErrorCounter", 42); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{leaf, "20"}, {"-x", leaf, "19"}, {"-l", leaf, "2,20,35"}, {"-x", "-l", leaf, "1-4"},
		{"-a", leaf, "2,20,35"}, {"-E", leaf, "20"}, {"-D", leaf, "20"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			sameAsReferenceAfter(t, f, prepare, "H-0001", "perfquery", args...)
		})
	}
}
