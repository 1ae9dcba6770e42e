package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// ringNet is a ring of n switches, each with one HCA: routed min-hop, the
// routes around the ring close a credit loop.
func ringNet(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "Switch 8 \"S%d\"\n[1] \"S%d\"[2]\n[2] \"S%d\"[1]\n[3] \"H%d\"[1]\n\n", i, (i+1)%n, (i+n-1)%n, i)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "Hca 1 \"H%d\"\n[1] \"S%d\"[3]\n\n", i, i)
	}
	return b.Bytes()
}

// torusNet is an n x n 2-D torus of switches, each with one HCA.
func torusNet(n int) []byte {
	var b bytes.Buffer
	for x := 0; x < n; x++ {
		for y := 0; y < n; y++ {
			fmt.Fprintf(&b, "Switch 8 \"T%d_%d\"\n[1] \"T%d_%d\"[2]\n[2] \"T%d_%d\"[1]\n[3] \"T%d_%d\"[4]\n[4] \"T%d_%d\"[3]\n[5] \"H%d_%d\"[1]\n\n",
				x, y, (x+1)%n, y, (x+n-1)%n, y, x, (y+1)%n, x, (y+n-1)%n, x, y)
		}
	}
	for x := 0; x < n; x++ {
		for y := 0; y < n; y++ {
			fmt.Fprintf(&b, "Hca 1 \"H%d_%d\"\n[1] \"T%d_%d\"[5]\n\n", x, y, x, y)
		}
	}
	return b.Bytes()
}

// firstSwitchRoots is a roots file naming the first switch of a net file:
// ibsim gives the switches GUIDs from 0x200000 in the file's order.
func firstSwitchRoots(t *testing.T) string {
	path := filepath.Join(os.TempDir(), "ibtool-e2e-ibdmchk-roots")
	if err := os.WriteFile(path, []byte("0x0000000000200000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dumpFabric starts (or shares) a fabric whose opensm writes its routing
// dumps (-D 0x43) and returns a copy of them.
func dumpFabric(t *testing.T, opts simfabric.Options) (*simfabric.Fabric, string) {
	t.Helper()
	opts.OpenSMArgs = append([]string{"-D", "0x43"}, opts.OpenSMArgs...)
	f := simfabric.ForTest(t, opts)
	return f, copyDumps(t, f, nil)
}

var dumpFiles = []string{"opensm-subnet.lst", "opensm.fdbs", "opensm.mcfdbs"}

// copyDumps copies the fabric's dumps once ready (ready, if not nil, says
// when) into a new directory.
func copyDumps(t *testing.T, f *simfabric.Fabric, ready func(map[string][]byte) bool) string {
	t.Helper()
	dir := t.TempDir()
	deadline := time.Now().Add(20 * time.Second)
	for {
		files := map[string][]byte{}
		for _, name := range dumpFiles {
			files[name], _ = os.ReadFile(filepath.Join(f.Dir(), name))
		}
		if len(files["opensm.fdbs"]) > 0 && (ready == nil || ready(files)) {
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return dir
		}
		if time.Now().After(deadline) {
			t.Fatalf("opensm wrote no (ready) dumps into %s", f.Dir())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// linkCoverageLine is the one line ibdmchk -u prints about a plan ibtool
// does not write (docs/differences.md).
var linkCoverageLine = regexp.MustCompile(`(?m)^-I- Generating non blocking full link coverage plan into:.*\n`)

// compareIbdmchk runs ibdmchk and ibtool's on the dumps in dir and wants
// the same report; ibdmchk segfaults at exit, so only its report counts.
// It returns ibtool's report.
func compareIbdmchk(t *testing.T, dir string, wantExit int, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ibdmchk"); err != nil {
		t.Skip("ibdmchk (Debian's ibutils) is not installed")
	}
	full := append([]string{"-s", "opensm-subnet.lst", "-f", "opensm.fdbs", "-m", "opensm.mcfdbs"}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ref := exec.CommandContext(ctx, "ibdmchk", full...)
	ref.Dir = dir
	var refOut bytes.Buffer
	ref.Stdout, ref.Stderr = &refOut, &refOut // its loop lines go to stderr
	_ = ref.Run()
	ours := exec.CommandContext(ctx, ibtoolBin, append([]string{"ibdmchk"}, full...)...)
	ours.Dir = dir
	var out, errOut bytes.Buffer
	ours.Stdout, ours.Stderr = &out, &errOut
	err := ours.Run()
	exit := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	want := linkCoverageLine.ReplaceAllString(refOut.String(), "")
	if got := out.String(); got != want {
		t.Errorf("ibdmchk %s: reports differ\n--- ibdmchk\n%s\n--- ibtool\n%s", strings.Join(args, " "), want, got)
	}
	if exit != wantExit {
		t.Errorf("ibdmchk %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), exit, wantExit, errOut.String())
	}
	return out.String()
}

// TestIbdmchkCreditLoops compares the credit-loop verdicts on a ring and a
// 2-D torus routed min-hop (loops) and Up/Down from a root (none).
func TestIbdmchkCreditLoops(t *testing.T) {
	roots := firstSwitchRoots(t)
	tests := []struct {
		name     string
		opts     simfabric.Options
		args     []string
		wantExit int
		want     string
		// live also checks the fabric with --fabric (checkLive)
		live bool
	}{
		{"ring minhop", simfabric.Options{Net: ringNet(5), SMNode: "H0"}, nil, 1, "Found credit loop on: S0000000000200000/U1/P1 VL: 0", true},
		{"ring minhop -a -M", simfabric.Options{Net: ringNet(5), SMNode: "H0"}, []string{"-a", "-M"}, 1, "-E- credit loops in routing", true},
		{"ring updn", simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, nil, 0, "-I- no credit loops found", true},
		// the rule is stricter than the graph: S3 to S1 goes sideways (down)
		// to S2, then up
		{"ring updn -u", simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, []string{"-u", "-r", roots}, 1, "-E- Found:1 CA to CA paths that can cause credit loops.", true},
		{"torus minhop", simfabric.Options{Net: torusNet(5), SMNode: "H0_0"}, nil, 1, "-E- credit loops in routing", false},
		{"torus updn", simfabric.Options{Net: torusNet(5), SMNode: "H0_0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, nil, 0, "-I- no credit loops found", false},
		{"torus updn -u", simfabric.Options{Net: torusNet(5), SMNode: "H0_0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, []string{"-u", "-r", roots}, 1, "CA to CA paths that can cause credit loops.", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, dir := dumpFabric(t, tc.opts)
			got := compareIbdmchk(t, dir, tc.wantExit, tc.args...)
			if !strings.Contains(got, tc.want) {
				t.Errorf("report lacks %q:\n%s", tc.want, got)
			}
			if tc.live {
				checkLive(t, f, dir, liveCheck{host: "H1", exit: tc.wantExit, dumpArgs: tc.args, liveArgs: tc.args, engineHops: tc.opts.RoutingEngine != ""})
			}
		})
	}
}

// TestIbdmchkFaults edits a ring's dumps into a black hole, a forwarding
// loop, a dead end and a cut multicast tree, and compares the reports.
func TestIbdmchkFaults(t *testing.T) {
	f, _ := dumpFabric(t, simfabric.Options{Net: ringNet(5), SMNode: "H0"})
	mgid, err := rdma.ParseGID("ff12:601b:ffff::e2e:30")
	if err != nil {
		t.Fatal(err)
	}
	var mlid uint16
	for _, h := range []string{"H0", "H2", "H3"} {
		if mlid, err = f.JoinMulticast(context.Background(), h, mgid); err != nil {
			t.Fatal(err)
		}
	}
	entry := fmt.Sprintf("0x%04X :", mlid)
	clean := copyDumps(t, f, func(files map[string][]byte) bool {
		return bytes.Count(files["opensm.mcfdbs"], []byte(entry)) == 5
	})
	compareIbdmchk(t, clean, 1) // the ring's credit loop
	// the live fabric with its multicast group, through the SA
	if got := checkLive(t, f, clean, liveCheck{host: "H1", exit: 1, liveArgs: []string{"--discovery", "sa"}}); !strings.Contains(got, "-I- Multicast Group:"+entry[:6]+" has:5 switches and:3 HCAs") {
		t.Errorf("live report lacks the multicast group %s:\n%s", entry[:6], got)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(clean, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	// setLFT rewrites one switch's entry for a LID in opensm.fdbs.
	setLFT := func(fdbs, sw string, lid int, entry string) string {
		var out []string
		cur, done := "", false
		for _, l := range strings.Split(fdbs, "\n") {
			if strings.HasPrefix(l, "dump_ucast_routes: Switch ") {
				cur = strings.TrimPrefix(l, "dump_ucast_routes: Switch ")
			} else if cur == sw && strings.HasPrefix(l, fmt.Sprintf("0x%04X ", lid)) {
				l, done = fmt.Sprintf("0x%04X : %s", lid, entry), true
			}
			out = append(out, l)
		}
		if !done {
			t.Fatalf("no entry for LID %d of %s", lid, sw)
		}
		return strings.Join(out, "\n")
	}
	// H3's LID, and the ring's switches S0 and S1.
	lid := lidOf(t, read("opensm-subnet.lst"), "{H3}")
	fdbs, mcfdbs := read("opensm.fdbs"), read("opensm.mcfdbs")
	s0, s1 := "0x0000000000200000", "0x0000000000200001"
	tests := []struct {
		name         string
		fdbs, mcfdbs string
		want         string
	}{
		{"black hole", setLFT(fdbs, s1, lid, "UNREACHABLE"), mcfdbs, "-E- Unassigned LFT for lid:"},
		{"loop", setLFT(setLFT(fdbs, s1, lid, "002  : 03   : yes"), s0, lid, "001  : 03   : yes"), mcfdbs, "-E- Aborting after 256 hops - loop in LFT?"},
		{"dead end", setLFT(fdbs, s1, lid, "005  : 03   : yes"), mcfdbs, "-E- Dead end at:S0000000000200001/U1"},
		{"multicast cut", fdbs, cutMFT(t, mcfdbs, s0, entry), "-E- Some Multicast Groups Routing Check Failed."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{"opensm-subnet.lst": read("opensm-subnet.lst"), "opensm.fdbs": tc.fdbs, "opensm.mcfdbs": tc.mcfdbs} {
				os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
			}
			if got := compareIbdmchk(t, dir, 1); !strings.Contains(got, tc.want) {
				t.Errorf("report lacks %q:\n%s", tc.want, got)
			}
		})
	}
	// the cut made in S0's switch itself: the live check sees what the
	// edited dumps say, and --dump writes them
	t.Run("multicast cut live", func(t *testing.T) {
		dir := t.TempDir()
		for name, data := range map[string]string{"opensm-subnet.lst": read("opensm-subnet.lst"), "opensm.fdbs": fdbs, "opensm.mcfdbs": cutMFT(t, mcfdbs, s0, entry)} {
			os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
		}
		was := setMFTPorts(t, f, mlid, 1, 3)
		defer setMFTPorts(t, f, mlid, maskPorts(was)...)
		if got := checkLive(t, f, dir, liveCheck{host: "H1", exit: 1}); !strings.Contains(got, "-E- Some Multicast Groups Routing Check Failed.") {
			t.Errorf("live report lacks the cut tree:\n%s", got)
		}
	})
}

// maskPorts returns the ports of a 16-port mask.
func maskPorts(mask uint16) []int {
	var ports []int
	for p := 0; p < 16; p++ {
		if mask&(1<<p) != 0 {
			ports = append(ports, p)
		}
	}
	return ports
}

// lidOf returns the LID of the port whose description is desc in
// opensm-subnet.lst.
func lidOf(t *testing.T, subnet, desc string) int {
	t.Helper()
	re := regexp.MustCompile(regexp.QuoteMeta(desc) + ` LID:([0-9A-F]+) `)
	m := re.FindStringSubmatch(subnet)
	if m == nil {
		t.Fatalf("no %s in the subnet file", desc)
	}
	var lid int
	fmt.Sscanf(m[1], "%X", &lid)
	return lid
}

// cutMFT removes the second of the three ports of a switch's multicast entry.
func cutMFT(t *testing.T, mcfdbs, sw, entry string) string {
	t.Helper()
	var out []string
	cur, done := "", false
	for _, l := range strings.Split(mcfdbs, "\n") {
		if strings.HasPrefix(l, "Switch ") {
			cur = strings.TrimPrefix(l, "Switch ")
		} else if cur == sw && strings.HasPrefix(l, entry) {
			// "0xC001 : 0x001  0x002  0x003": leave port 2 out, so the
			// ring beyond it is cut off the tree
			f := strings.Fields(l)
			if len(f) != 5 {
				t.Fatalf("entry %q is not the three ports of a ring switch", l)
			}
			l, done = fmt.Sprintf("%s : %s  %s ", f[0], f[2], f[4]), true
		}
		out = append(out, l)
	}
	if !done {
		t.Fatalf("no multicast entry of %s", sw)
	}
	return strings.Join(out, "\n")
}

// TestIbdmchkLMC compares the reports on a ring routed with LMC 1:
// ibdmchk walks the LIDs 1, 3, 5... for its hop tables, which opensm's
// even base LIDs miss, and both give up at the min-hop tables.
func TestIbdmchkLMC(t *testing.T) {
	f, dir := dumpFabric(t, simfabric.Options{Net: ringNet(5), SMNode: "H0", OpenSMArgs: []string{"-l", "1"}})
	if got := compareIbdmchk(t, dir, 1, "-l", "1"); !strings.Contains(got, "-E- Fail to update Min Hops Tables.") {
		t.Errorf("report:\n%s", got)
	}
	// the live mode takes the LMC from the ports
	checkLive(t, f, dir, liveCheck{host: "H1", exit: 1, dumpArgs: []string{"-l", "1"}})
}

// TestIbdmchkFatTree compares the reports on a two-level fat tree, with
// the roots found from the min-hop tables (-u) and every route (-a).
func TestIbdmchkFatTree(t *testing.T) {
	net, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 48, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	f, dir := dumpFabric(t, simfabric.Options{Net: net})
	for _, args := range [][]string{nil, {"-u"}, {"-a"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			compareIbdmchk(t, dir, 0, args...)
		})
	}
	t.Run("live", func(t *testing.T) {
		checkLive(t, f, dir, liveCheck{host: "H-0001"})
	})
}

// TestIbdmchkDamagedDumps wants a clear error naming the file and line and
// exit 2 for damaged dumps, never a crash.
func TestIbdmchkDamagedDumps(t *testing.T) {
	_, clean := dumpFabric(t, simfabric.Options{Net: ringNet(5), SMNode: "H0"})
	read := func(name string) string {
		data, _ := os.ReadFile(filepath.Join(clean, name))
		return string(data)
	}
	subnet, fdbs := read("opensm-subnet.lst"), read("opensm.fdbs")
	firstLine := subnet[:strings.IndexByte(subnet, '\n')]
	tests := []struct {
		name, file, data, want string
	}{
		{"truncated subnet line", "opensm-subnet.lst", firstLine[:len(firstLine)/2] + "\n" + subnet, "opensm-subnet.lst:1: "},
		{"empty subnet", "opensm-subnet.lst", "", "opensm-subnet.lst: no active links"},
		{"garbage in fdbs", "opensm.fdbs", strings.Replace(fdbs, "LID    : Port", "LID    : Port\nthis is not a table line", 1), "opensm.fdbs:3: unrecognised line"},
		{"unknown switch", "opensm.fdbs", strings.Replace(fdbs, "Switch 0x0000000000200000", "Switch 0x00000000deadbeef", 1), "switch 0x00000000deadbeef is not in the subnet file"},
		{"bad port", "opensm.fdbs", strings.Replace(fdbs, "0x0001 : ", "0x0001 : x", 1), "opensm.fdbs:"},
		{"bad multicast", "opensm.mcfdbs", "Switch 0x0000000000200000\nLID    : Out Port(s)\n0xC001 : 0xZZ\n", "opensm.mcfdbs:3: bad port"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range dumpFiles {
				data := read(name)
				if name == tc.file {
					data = tc.data
				}
				os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644)
			}
			cmd := exec.Command(ibtoolBin, "ibdmchk", "-s", "opensm-subnet.lst", "-f", "opensm.fdbs", "-m", "opensm.mcfdbs")
			cmd.Dir = dir
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("exit %v, want 2; stderr %q", err, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tc.want)
			}
		})
	}
}

// designVerdict is what the design mode must agree on with the
// verification mode: the verdicts, not the exact tables (tie-breaking
// differs from opensm's).
type designVerdict struct {
	Failed    bool
	StoppedAt string
	Paths     int64
	Missing   int  // CA-to-CA routes that do not arrive
	AllMiss   int  // with -a, switch routes that do not arrive
	Loop      bool // a credit loop
	MinHopMax int  // the longest CA-to-CA min-hop distance
	RouteMax  int  // the longest CA-to-CA route
	BadUpDown int  // routes against the Up/Down rule (-u)
}

func ibdmchkVerdict(t *testing.T, out []byte) designVerdict {
	t.Helper()
	var doc struct {
		Failed    bool
		StoppedAt string
		MinHop    struct{ CAPairs []struct{ Value int } }
		Routes    struct {
			Paths    int64
			Failures []json.RawMessage
			Hops     []struct{ Value int }
		}
		AllRoutes   struct{ Failures []json.RawMessage }
		CreditLoops struct{ Loop []json.RawMessage }
		UpDown      struct{ BadPaths []json.RawMessage }
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("ibdmchk --json: %v\n%s", err, out)
	}
	v := designVerdict{Failed: doc.Failed, StoppedAt: doc.StoppedAt, Paths: doc.Routes.Paths,
		Missing: len(doc.Routes.Failures), AllMiss: len(doc.AllRoutes.Failures), Loop: len(doc.CreditLoops.Loop) > 0, BadUpDown: len(doc.UpDown.BadPaths)}
	if n := len(doc.MinHop.CAPairs); n > 0 {
		v.MinHopMax = doc.MinHop.CAPairs[n-1].Value
	}
	if n := len(doc.Routes.Hops); n > 0 {
		v.RouteMax = doc.Routes.Hops[n-1].Value
	}
	return v
}

// TestIbdmchkDesign feeds ibnetdiscover's topology of each simulated
// fabric to the design mode (--topo) and wants the verdicts of the
// verification mode on opensm's own dumps of the same fabric routed by the
// same engine: a credit loop or none, the routes that do not arrive, the
// longest min-hop distance and route.
func TestIbdmchkDesign(t *testing.T) {
	roots := firstSwitchRoots(t)
	tree, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 2, Hosts: 48, Radix: 36})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		opts   simfabric.Options
		host   string
		design []string // the design mode's options beside --topo
		check  []string // both modes' check options
	}{
		{"ring minhop", simfabric.Options{Net: ringNet(5), SMNode: "H0"}, "H0", nil, nil},
		{"ring updn", simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, "H0", []string{"--routing", "updn", "-r", roots}, nil},
		// -u routes Up/Down and checks the rule: the ring's one route going
		// sideways (down by ibdmchk's rule) then up, in both
		{"ring updn -u", simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, "H0", nil, []string{"-u", "-r", roots}},
		{"torus minhop", simfabric.Options{Net: torusNet(5), SMNode: "H0_0"}, "H0_0", nil, nil},
		{"torus updn", simfabric.Options{Net: torusNet(5), SMNode: "H0_0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, "H0_0", []string{"--routing", "updn", "-r", roots}, nil},
		{"fat tree minhop", simfabric.Options{Net: tree}, "H-0001", nil, nil},
		{"fat tree updn", simfabric.Options{Net: tree, RoutingEngine: "updn"}, "H-0001", []string{"--routing", "updn"}, nil},
		{"fat tree updn -u", simfabric.Options{Net: tree, RoutingEngine: "updn"}, "H-0001", nil, []string{"-u"}},
		// -a: opensm's updn leaves the spines' entries for each other
		// UNREACHABLE, and so does the design
		{"fat tree updn -a", simfabric.Options{Net: tree, RoutingEngine: "updn"}, "H-0001", []string{"--routing", "updn"}, []string{"-a"}},
		{"ring updn -a", simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "updn", OpenSMArgs: []string{"-a", roots}}, "H0", []string{"--routing", "updn", "-r", roots}, []string{"-a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, dir := dumpFabric(t, tc.opts)
			ctx := context.Background()
			topo, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, tc.host, "ibnetdiscover")
			if err != nil || exit != 0 {
				t.Fatalf("ibnetdiscover: exit %d, %v: %s", exit, err, errOut)
			}
			topoFile := filepath.Join(dir, "fabric.topo")
			if err := os.WriteFile(topoFile, topo, 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) designVerdict {
				t.Helper()
				cmd := exec.CommandContext(ctx, ibtoolBin, append([]string{"ibdmchk", "--json"}, args...)...)
				cmd.Dir = dir
				var out, errOut bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errOut
				if err := cmd.Run(); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.ExitCode() != 1 {
						t.Fatalf("ibdmchk %s: %v: %s", strings.Join(args, " "), err, errOut.String())
					}
				}
				return ibdmchkVerdict(t, out.Bytes())
			}
			want := run(append([]string{"-s", "opensm-subnet.lst", "-f", "opensm.fdbs", "-m", "opensm.mcfdbs"}, tc.check...)...)
			design := append(append([]string{"--topo", topoFile}, tc.design...), tc.check...)
			got := run(design...)
			t.Logf("verdict %+v", got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("design verdict differs from opensm's routing (-opensm +design):\n%s", diff)
			}
			// the text report of the design mode, as ibdmchk's starts
			out, errOut, _, err := f.RunIbtool(ctx, ibtoolBin, tc.host, "ibdmchk", design...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(out), "-------------------------------------------------\nIBDMCHK Cluster Design Mode:\n Topology File .. "+topoFile+"\n") {
				t.Errorf("design report (stderr %q):\n%s", errOut, out)
			}
		})
	}
}
