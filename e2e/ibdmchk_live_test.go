package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// inputLines are the lines of ibdmchk's report that name its input: the
// banner's files (or the live fabric) and the lines before each count.
var inputLines = regexp.MustCompile(`(?m)^( FDB File = | MCFDB File = | Subnet File = | Fabric = |-I- Parsing (Subnet|FDBs|Multicast FDBs) file:|-I- Discovered the subnet: |-I- Read the [LM]FTs of ).*\n`)

// liveCheck is what checkLive runs and wants.
type liveCheck struct {
	// host is the node ibtool attaches as.
	host string
	// exit is the exit status both modes want.
	exit int
	// dumpArgs are given to the dump mode, liveArgs to the live one.
	dumpArgs, liveArgs []string
	// engineHops is set for a routing engine other than min-hop, whose
	// hop counts in opensm.fdbs are its own (Up/Down counts only the
	// paths it allows): --dump writes the topology's, so only the ports
	// are compared.
	engineHops bool
}

// fdbHops is the Hops and Optimal columns of opensm.fdbs.
var fdbHops = regexp.MustCompile(`(?m)^(0x[0-9A-F]{4} : [0-9]{3}  : ).*$`)

// checkLive runs ibdmchk --fabric --dump on the fabric and wants: the
// report of ibtool's dump mode on opensm's dumps in dir (the lines naming
// the input aside), the same exit, dumps byte for byte opensm's, and real
// ibdmchk on those dumps agreeing with ibtool (compareIbdmchk).
func checkLive(t *testing.T, f *simfabric.Fabric, dir string, c liveCheck) string {
	t.Helper()
	ours := t.TempDir()
	args := append([]string{"--fabric", "--dump", ours}, c.liveArgs...)
	live, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, c.host, "ibdmchk", args...)
	if err != nil {
		t.Fatal(err)
	}
	if exit != c.exit {
		t.Errorf("ibdmchk %s: exit %d, want %d (stderr %q)", strings.Join(args, " "), exit, c.exit, errOut)
	}
	dump := compareIbdmchk(t, dir, c.exit, c.dumpArgs...)
	if got, want := inputLines.ReplaceAllString(string(live), ""), inputLines.ReplaceAllString(dump, ""); got != want {
		t.Errorf("ibdmchk %s: the live report differs from the dump mode's\n--- dump mode\n%s\n--- live\n%s", strings.Join(c.liveArgs, " "), want, got)
	}
	for _, name := range dumpFiles {
		want, _ := os.ReadFile(filepath.Join(dir, name))
		got, err := os.ReadFile(filepath.Join(ours, name))
		if c.engineHops && name == "opensm.fdbs" {
			want, got = fdbHops.ReplaceAll(want, []byte("$1")), fdbHops.ReplaceAll(got, []byte("$1"))
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("--dump %s differs from opensm's (%v)\n--- opensm\n%s\n--- ibtool\n%s", name, err, want, got)
		}
	}
	compareIbdmchk(t, ours, c.exit, c.dumpArgs...)
	return string(live)
}

// TestIbdmchkLiveCraftedLFTs routes a ring by opensm's file engine from an
// LFT file with a black hole, a forwarding loop and a dead end, and wants
// the live check to find them as the dump mode and ibdmchk do; then it
// drops every LFT read of one switch mid-sweep and wants that reported,
// the rest of the fabric read and checked.
func TestIbdmchkLiveCraftedLFTs(t *testing.T) {
	lfts := filepath.Join(t.TempDir(), "crafted.lfts")
	// the file is not there yet: opensm routes min-hop until it is
	f := simfabric.ForTest(t, simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "file",
		OpenSMArgs: []string{"-D", "0x43", "-U", lfts}})
	first := copyDumps(t, f, nil)
	orig, err := os.ReadFile(filepath.Join(f.Dir(), "opensm-lfts.dump"))
	if err != nil {
		t.Fatal(err)
	}
	subnet, _ := os.ReadFile(filepath.Join(first, "opensm-subnet.lst"))
	h2, h3, h4 := lidOf(t, string(subnet), "{H2}"), lidOf(t, string(subnet), "{H3}"), lidOf(t, string(subnet), "{H4}")
	s0, s1 := "0x0000000000200000", "0x0000000000200001"
	crafted := craftLFTs(t, string(orig), map[string]map[int]string{
		s0: {h2: "001"},                    // S0 sends H2's packets to S1...
		s1: {h2: "002", h3: "", h4: "005"}, // ...which sends them back; H3 unrouted; H4 out of a port with no link
	})
	if err := os.WriteFile(lfts, []byte(crafted), 0o644); err != nil {
		t.Fatal(err)
	}
	_, opensm := f.PIDs()
	if err := syscall.Kill(opensm, syscall.SIGHUP); err != nil { // a heavy sweep reads the file
		t.Fatal(err)
	}
	dir := copyDumps(t, f, func(files map[string][]byte) bool {
		return bytes.Contains(files["opensm.fdbs"], []byte("HOPS UNKNOWN"))
	})
	got := checkLive(t, f, dir, liveCheck{host: "H1", exit: 1})
	for _, want := range []string{"-E- Aborting after 256 hops - loop in LFT?", "-E- Unassigned LFT for lid:", "-E- Dead end at:S0000000000200001/U1"} {
		if !strings.Contains(got, want) {
			t.Errorf("live report lacks %q:\n%s", want, got)
		}
	}

	t.Run("fault mid-sweep", func(t *testing.T) {
		ctx := context.Background()
		// S3's LFT reads are lost; discovery and every other read go through
		for p := 1; p <= 3; p++ {
			if err := f.SetErrorRate(ctx, simfabric.Port("S3", p), 100, 0x19); err != nil {
				t.Fatal(err)
			}
			defer f.SetErrorRate(ctx, simfabric.Port("S3", p), 0, 0)
		}
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "H1", "ibdmchk", "--fabric", "-t", "50", "--retries", "0")
		if err != nil {
			t.Fatal(err)
		}
		if exit != 3 {
			t.Errorf("exit %d, want 3 (a partial sweep)", exit)
		}
		if !strings.Contains(string(errOut), `switch 0x0000000000200003 "S3"`) || !strings.Contains(string(errOut), "table reads failed") {
			t.Errorf("stderr does not name S3's failed reads:\n%s", errOut)
		}
		if !strings.Contains(string(out), "-I- Defined 10/10 systems/nodes") {
			t.Errorf("the report does not have the whole subnet:\n%s", out)
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "-E- Unassigned LFT") && !strings.HasSuffix(l, "S0000000000200003/U1") && !strings.HasSuffix(l, "S0000000000200001/U1") {
				t.Errorf("a black hole off S3 (and the crafted one at S1): %s", l)
			}
		}
	})
}

// craftLFTs edits opensm-lfts.dump (the format of opensm's file routing
// engine): per switch GUID, LID to port, "" dropping the LID's entry.
func craftLFTs(t *testing.T, dump string, edits map[string]map[int]string) string {
	t.Helper()
	head := regexp.MustCompile(`^Unicast lids .* guid (0x[0-9a-f]+) `)
	var out []string
	cur, done := "", 0
	for _, l := range strings.Split(dump, "\n") {
		if m := head.FindStringSubmatch(l); m != nil {
			cur = m[1]
		}
		for lid, port := range edits[cur] {
			if strings.HasPrefix(l, fmt.Sprintf("0x%04x ", lid)) {
				done++
				if port == "" {
					l = ""
				} else {
					l = fmt.Sprintf("0x%04x %s", lid, port)
				}
			}
		}
		if l != "" {
			out = append(out, l)
		}
	}
	want := 0
	for _, e := range edits {
		want += len(e)
	}
	if done != want {
		t.Fatalf("made %d of %d LFT edits in\n%s", done, want, dump)
	}
	return strings.Join(out, "\n") + "\n"
}

// TestIbdmchkLiveSL2VL reads the ring's SL2VL tables (ibsim's: SL n to VL
// n) with --sl2vl, and wants ibtool's and ibdmchk's reports on --dump's
// files with -d to be the live one.
func TestIbdmchkLiveSL2VL(t *testing.T) {
	f, _ := dumpFabric(t, simfabric.Options{Net: ringNet(5), SMNode: "H0"})
	ours := t.TempDir()
	live, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "H1", "ibdmchk", "--fabric", "--sl2vl", "--dump", ours)
	if err != nil {
		t.Fatal(err)
	}
	if exit != 1 {
		t.Errorf("exit %d, want 1 (the ring's credit loop); stderr %q", exit, errOut)
	}
	if !strings.Contains(string(live), "-I- Read 45 SL2VL tables of switch port pairs") {
		t.Errorf("live report:\n%s", live)
	}
	slvl := regexp.MustCompile(`(?m)^( SLVL File = |-I- Parsing SLVL file:|-I- Read \d+ SL2VL tables).*\n`)
	dump := compareIbdmchk(t, ours, 1, "-d", "ibdmchk-sl2vl.lst")
	got, want := slvl.ReplaceAllString(inputLines.ReplaceAllString(string(live), ""), ""), slvl.ReplaceAllString(inputLines.ReplaceAllString(dump, ""), "")
	if got != want {
		t.Errorf("the live report differs from the dump mode's with -d\n--- dump mode\n%s\n--- live\n%s", want, got)
	}
}

// TestIbdmchkLivePathSLs routes a ring by opensm's DFSSSP, which breaks the
// ring's credit loop by giving some paths another SL (and so VL): taking SL
// 0 everywhere the check finds the loop; with the SA's path SLs
// (--path-sl) and the switches' SL2VL tables (--sl2vl) it finds none, as
// ibtool's and ibdmchk's dump mode do on --dump's files with -c and -d.
func TestIbdmchkLivePathSLs(t *testing.T) {
	f := simfabric.ForTest(t, simfabric.Options{Net: ringNet(5), SMNode: "H0", RoutingEngine: "dfsssp"})
	ctx := context.Background()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "H1", "ibdmchk", "--fabric")
	if err != nil {
		t.Fatal(err)
	}
	if exit != 1 || !strings.Contains(string(out), "-E- credit loops in routing") {
		t.Errorf("SL 0 everywhere: exit %d, want 1 and a credit loop; stderr %q\n%s", exit, errOut, out)
	}
	ours := t.TempDir()
	live, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "H1", "ibdmchk", "--fabric", "--path-sl", "--sl2vl", "--dump", ours)
	if err != nil {
		t.Fatal(err)
	}
	if exit != 0 || !strings.Contains(string(live), "-I- no credit loops found") {
		t.Errorf("with the path SLs: exit %d, want 0 and no credit loop; stderr %q\n%s", exit, errOut, live)
	}
	sls := regexp.MustCompile(`(?m)^( SLVL File = | SL File = |-I- Parsing SLVL file:|-I- Parsing SL file:|-I- Read \d+ (SL2VL tables|path SLs)).*\n`)
	dump := compareIbdmchk(t, ours, 0, "-c", "ibdmchk-psl.lst", "-d", "ibdmchk-sl2vl.lst")
	got, want := sls.ReplaceAllString(inputLines.ReplaceAllString(string(live), ""), ""), sls.ReplaceAllString(inputLines.ReplaceAllString(dump, ""), "")
	if got != want {
		t.Errorf("the live report differs from the dump mode's with -c and -d\n--- dump mode\n%s\n--- live\n%s", want, got)
	}
}

// setMFTPorts sets S0's multicast entry of mlid on the ring to ports
// (0 to 15), by SMP from H1 (through S1's port 2), and returns the entry's
// mask as it was.
func setMFTPorts(t *testing.T, f *simfabric.Fabric, mlid uint16, ports ...int) uint16 {
	t.Helper()
	ctx := context.Background()
	c, err := ibsim.Dial(ctx, ibsim.Config{SockName: f.SockName(), Host: "H1"})
	if err != nil {
		t.Fatal(err)
	}
	x := madrpc.NewTransactor(c, madrpc.TransactorOptions{Timeout: time.Second, Retries: 2})
	defer x.Close()
	q := &madrpc.Querier{X: x, Path: mad.Path{DR: []uint8{0, 1, 2}}}
	mod := mad.MFTModifier(mad.MFTBlock(int(mlid)), 0)
	var block mad.MulticastForwardingTable
	if _, err := q.Get(ctx, &block, mod); err != nil {
		t.Fatal(err)
	}
	was := block.PortMask(int(mlid))
	var mask uint16
	for _, p := range ports {
		mask |= 1 << p
	}
	block.SetPortMask(int(mlid), mask)
	if _, err := q.Set(ctx, &block, mod, nil); err != nil {
		t.Fatal(err)
	}
	return was
}
