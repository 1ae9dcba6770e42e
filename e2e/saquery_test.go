package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// smActCount matches an SMInfoRecord's activity count, which opensm
// raises as it runs.
var smActCount = regexp.MustCompile(`ActCount\.+\d+`)

func maskActCount(b []byte) []byte { return smActCount.ReplaceAll(b, []byte("ActCount..N")) }

// TestSaqueryMatchesReference asks opensm's SA for every record type and
// through every filter option, with ibtool and with infiniband-diags'
// saquery (whose RMPP the bench's preload layer carries).
func TestSaqueryMatchesReference(t *testing.T) {
	f := smallFabric(t)
	for _, a := range [][]string{
		nil, {"NR"}, {"NR", "2"}, {"NR", "Hca1"}, {"2"}, {"-N"}, {"-N", "Hca2"},
		{"-D"}, {"--list"}, {"-L", "Hca3"}, {"-l", "Hca3"}, {"-G", "Hca4"}, {"-O", "5"}, {"-U", "0x10000a"},
		{"-s"},
		{"-x"}, {"LR", "1/3"}, {"LR", "Switch1/3"}, {"LR", "1/3", "3"},
		{"SL2VL"}, {"SL2VL", "1/1/3"}, {"--smkey", "1", "PKTR"}, {"--smkey", "1", "PKTR", "2/1/0"},
		{"VLAR"}, {"VLAR", "1/3/1"}, {"LFTR"}, {"LFTR", "3"}, {"LFTR", "1/0"}, {"GIR"}, {"GIR", "2/0"},
		{"SWIR"}, {"SWIR", "3"}, {"CPI"}, {"-c"}, {"-g"}, {"-m"}, {"-m", "0xc000"}, {"MCMR"}, {"MCMR", "--mlid", "0xc000"},
		{"-p"}, {"PR", "--slid", "2", "--dlid", "5"}, {"--src-to-dst", "2:6"}, {"--src-to-dst", "Hca1:Hca4"},
		{"-p", "--dgid", "fe80::10:4", "--sgid", "fe80::10:1"},
	} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", "saquery", a...)
		})
	}
	// PortInfoRecords: infiniband-diags warns on stderr of the ports
	// without a link (mad_dump_linkwidth: bad width 0).
	for _, a := range [][]string{{"PIR"}, {"PIR", "2"}, {"PIR", "1/3"}, {"PIR", "1//0"}, {"-K", "PIR", "4/1"}} {
		t.Run(strings.Join(a, " "), func(t *testing.T) { compareExit(t, f, "Hca1", 0, "saquery", a...) })
	}
	// Queries the SA answers with no records: both print nothing.
	for _, a := range [][]string{
		{"SR"}, {"-S"}, {"IIR"}, {"-I"}, {"MFTR"}, {"MFTR", "1/0/0"}, {"-U", "0x100009"},
		{"--sgid-to-dgid", "fe80::10:1-fe80::10:9"}, {"-p", "--slid", "2", "--dlid", "4", "--sl", "0", "-M", "4"},
	} {
		t.Run(strings.Join(a, " "), func(t *testing.T) { compareExit(t, f, "Hca1", 0, "saquery", a...) })
	}
	t.Run("SMIR", func(t *testing.T) { sameAsReferenceMasked(t, f, maskActCount, "Hca1", "saquery", "SMIR") })
	t.Run("from a switch", func(t *testing.T) { sameAsReference(t, f, "Switch2", "saquery", "-x") })
	t.Run("empty LID", func(t *testing.T) {
		failsCleanly(t, f, "Hca1", 2, `Invalid lid specified: ""`, "saquery", "LR", "/", "3")
	})
	t.Run("untrusted PKTR", func(t *testing.T) {
		failsCleanly(t, f, "Hca1", 3, "MAD status 0x0200: ERR_REQ_INVALID", "saquery", "PKTR")
	})
}

// TestSaqueryJSON checks saquery --json against what the fabric is.
func TestSaqueryJSON(t *testing.T) {
	f := smallFabric(t)
	out, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "saquery", "--json", "-x")
	if err != nil || exit != 0 {
		t.Fatalf("saquery --json -x: exit %d, %v, %s", exit, err, errOut)
	}
	var doc struct {
		Records []struct {
			FromLID, FromPort, ToPort, ToLID int
		} `json:"records"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	// 4 host links and 2 inter-switch links, each seen from both ends.
	found := false
	for _, r := range doc.Records {
		found = found || (r.FromLID == 1 && r.FromPort == 1 && r.ToLID == 2 && r.ToPort == 1)
	}
	if len(doc.Records) != 12 || !found {
		t.Errorf("%d LinkRecords (want 12), Switch1/1 -> Hca1/1 found %v: %+v", len(doc.Records), found, doc.Records)
	}
}

// TestSaqueryBigFabric compares tables that span hundreds of RMPP
// segments: a 200-host tree's NodeRecords (about 120 segments),
// PortInfoRecords, LinkRecords and LFTRecords.
func TestSaqueryBigFabric(t *testing.T) {
	if testing.Short() {
		t.Skip("big fabric: not with -short")
	}
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 200, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	f := simfabric.ForTest(t, simfabric.Options{Net: net})
	for _, a := range [][]string{nil, {"-x"}, {"LFTR"}, {"-D"}} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "H-0100", "saquery", a...)
		})
	}
	// infiniband-diags warns on stderr of the ports without a link.
	t.Run("PIR", func(t *testing.T) { compareExit(t, f, "H-0100", 0, "saquery", "PIR") })
}

// TestViaSAMatchesReference: with --sa the SMP tools read the SA's
// records (python-rdma's --sa) and print what infiniband-diags' SMPs
// read, for the attributes opensm keeps as the devices report them.
func TestViaSAMatchesReference(t *testing.T) {
	f := smallFabric(t)
	for _, c := range [][]string{
		{"smpquery", "nodeinfo", "4"}, {"smpquery", "nodedesc", "1"}, {"smpquery", "portinfo", "4"},
		{"smpquery", "switchinfo", "3"}, {"smpquery", "guidinfo", "5"},
		{"smpquery", "pkeys", "6"}, {"smpquery", "-G", "nodeinfo", "0x100004"},
		{"ibroute", "3"}, {"ibaddr", "6"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, c, append([]string{c[0], "--sa"}, c[1:]...))
		})
	}
	// A DR path is found as a LID through the SA's LinkRecords, and
	// NodeInfo's LocalPortNum is the port the route enters by.
	t.Run("DR path", func(t *testing.T) {
		sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, []string{"smpquery", "-D", "nodeinfo", "0,1,3"},
			[]string{"smpquery", "--sa", "-D", "nodeinfo", "0,1,3"})
	})
}

// TestSADiscoveryMatchesReference: --discovery sa reads the fabric from
// the SA's records with no SMPs; where opensm's records hold what the
// devices report, the tools print what infiniband-diags' walk gives.
func TestSADiscoveryMatchesReference(t *testing.T) {
	check := func(t *testing.T, f *simfabric.Fabric, host string, cases [][]string) {
		for _, c := range cases {
			t.Run(strings.Join(c, " "), func(t *testing.T) {
				ref := run(t, c[0], func(ctx context.Context) ([]byte, []byte, int, error) {
					return f.RunReference(ctx, host, c[0], c[1:]...)
				})
				got := run(t, "ibtool "+c[0], func(ctx context.Context) ([]byte, []byte, int, error) {
					return f.RunIbtool(ctx, ibtoolBin, host, c[0], append([]string{"--discovery", "sa"}, c[1:]...)...)
				})
				// ibqueryerrors exits 1, with a line on stderr, when
				// another test left errors on the shared fabric.
				if ref.exit != got.exit || (got.exit == 0 && len(got.stderr) != 0) {
					t.Fatalf("reference exit %d; ibtool --discovery sa exit %d, stderr %q", ref.exit, got.exit, got.stderr)
				}
				mask := func(b []byte) []byte { return trafficCounters.ReplaceAll(maskTopology(b), []byte("[traffic]")) }
				if want, have := mask(ref.stdout), mask(got.stdout); !bytes.Equal(want, have) {
					t.Errorf("ibtool %s --discovery sa differs from infiniband-diags (-want +got):\n%s", c[0], simfabric.Diff(want, have))
				}
			})
		}
	}
	t.Run("small", func(t *testing.T) {
		check(t, smallFabric(t), "Hca1", [][]string{
			{"ibnetdiscover"}, {"ibnetdiscover", "-s"}, {"ibnetdiscover", "-l"}, {"iblinkinfo"}, {"ibhosts"},
			{"ibswitches"}, {"dump_lfts"}, {"ibqueryerrors"},
		})
	})
	t.Run("200 hosts", func(t *testing.T) {
		if testing.Short() {
			t.Skip("big fabric: not with -short")
		}
		net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 200, Radix: 36})
		if err != nil {
			t.Fatal(err)
		}
		f := simfabric.ForTest(t, simfabric.Options{Net: net})
		check(t, f, "H-0100", [][]string{{"ibnetdiscover"}, {"iblinkinfo"}, {"dump_lfts"}})
	})
	t.Run("from a node", func(t *testing.T) {
		ibtoolFails(t, smallFabric(t), "Hca1", 2, "--discovery sa reads the whole subnet", "iblinkinfo", "--discovery", "sa", "-D", "0,1")
	})
}

// TestSaqueryFaults: with MADs dropped at the requester's port, RMPP
// segments are lost on the way; saquery prints the whole table (the
// transfer recovered) or fails with one line, never part of a table.
func TestSaqueryFaults(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	want, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "saquery", "PIR")
	if err != nil || len(want) == 0 {
		t.Fatal(err)
	}
	port := simfabric.Port("Hca1", 1)
	if err := f.SetErrorRate(ctx, port, 20, 0); err != nil {
		t.Fatal(err)
	}
	defer f.SetErrorRate(ctx, port, 0, 0)
	whole := 0
	for range 5 {
		got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "saquery", "PIR", "--retries", "5", "-t", "200")
		switch {
		case err != nil:
			t.Fatal(err)
		case exit == 0 && bytes.Equal(got, want) && len(errOut) == 0:
			whole++
		case exit == 3 && len(got) == 0 && bytes.Count(errOut, []byte("\n")) == 1:
			t.Logf("failed cleanly: %s", errOut)
		default:
			t.Fatalf("exit %d, stderr %q; output (-want +got):\n%s", exit, errOut, simfabric.Diff(want, got))
		}
	}
	if whole == 0 {
		t.Error("no run of five recovered the whole table")
	}
}

// TestSaqueryMultiPath asks opensm for MultiPathRecords with one
// SubnAdmGetMulti, which ibtool sends in RMPP itself (infiniband-diags'
// saquery has no MultiPathRecord): the PathRecords of the answer must be
// the ones infiniband-diags' saquery --sgid-to-dgid gets for each pair, in
// opensm's order (each source with each destination).
func TestSaqueryMultiPath(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	t.Run("one pair", func(t *testing.T) {
		sameOutput(t, f, "Hca1", func(b []byte) []byte { return b }, []string{"saquery", "--sgid-to-dgid", "fe80::10:1-fe80::10:4"}, []string{"saquery", "MPR", "fe80::10:1", "fe80::10:4"})
	})
	t.Run("two by two", func(t *testing.T) {
		var want []byte
		for _, pair := range []string{"fe80::10:1-fe80::10:4", "fe80::10:1-fe80::10:a", "fe80::10:7-fe80::10:4", "fe80::10:7-fe80::10:a"} {
			out, errOut, exit, err := f.RunReference(ctx, "Hca1", "saquery", "--smkey", "1", "--sgid-to-dgid", pair)
			if err != nil || exit != 0 {
				t.Fatalf("saquery --sgid-to-dgid %s: exit %d, %v, %s", pair, exit, err, errOut)
			}
			want = append(want, out...)
		}
		got, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "saquery", "--smkey", "1", "MPR", "fe80::10:1,fe80::10:7", "fe80::10:4,fe80::10:a")
		if err != nil || exit != 0 {
			t.Fatalf("exit %d, %v, %s", exit, err, errOut)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("MultiPathRecords differ from the PathRecords (-want +got):\n%s", simfabric.Diff(want, got))
		}
		out, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "saquery", "--json", "--smkey", "1", "MPR", "fe80::10:1,fe80::10:7", "fe80::10:4,fe80::10:a")
		var doc struct{ Records []json.RawMessage }
		if err != nil || json.Unmarshal(out, &doc) != nil || len(doc.Records) != 4 {
			t.Errorf("--json: %v, %d records, want 4:\n%s", err, len(doc.Records), out)
		}
	})
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "SubnAdmGetMulti(MultiPathRecord) to Lid 1: MAD status 0x0500: ERR_REQ_INVALID_GID", "saquery", "MPR", "fe80::10:1", "fe80::10:99")
		ibtoolFails(t, f, "Hca1", 2, "want <sgid>[,<sgid>...] <dgid>[,<dgid>...], got 1 argument(s)", "saquery", "MPR", "fe80::10:1")
		ibtoolFails(t, f, "Hca1", 2, `invalid GID "fe80::zz"`, "saquery", "MPR", "fe80::10:1", "fe80::zz")
	})
}
