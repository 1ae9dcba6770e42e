package e2e

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDiscoverySMKey checks that --smkey of a discovery tool is the SM_Key
// of the SA queries --discovery sa sends (the SA header's bytes 36 to 43,
// as -vv dumps each MAD sent): 0 by default, as before the flag, and
// ibdiag.conf's sa_key when --smkey is not given. opensm answers key 0
// (untrusted) and its own key, 1; it does not answer another.
func TestDiscoverySMKey(t *testing.T) {
	f := smallFabric(t)
	conf := filepath.Join(t.TempDir(), "ibdiag.conf")
	if err := os.WriteFile(conf, []byte("sa_key=0x77\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args     []string
		want     string
		wantExit int
	}{
		{[]string{"ibswitches", "--discovery", "sa"}, "0000000000000000", 0},
		{[]string{"ibswitches", "--sa", "--smkey", "1"}, "0000000000000001", 0},
		{[]string{"ibnetdiscover", "--discovery", "SA", "--smkey", "0x1"}, "0000000000000001", 0},
		{[]string{"ibhosts", "--discovery", "sa", "-z", conf, "--smkey", "0"}, "0000000000000000", 0},
		// A key opensm does not hold: no answer, and the key on the wire.
		{[]string{"ibhosts", "--discovery", "sa", "-z", conf, "-t", "100"}, "0000000000000077", 3},
		{[]string{"ibswitches", "--sa", "--smkey", "0x1234", "-t", "100"}, "0000000000001234", 3},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			got := run(t, "ibtool", func(ctx context.Context) ([]byte, []byte, int, error) {
				return f.RunIbtool(ctx, ibtoolBin, "Hca1", c.args[0], append(c.args[1:], "-vv")...)
			})
			if got.exit != c.wantExit {
				t.Fatalf("exit %d, want %d; stderr %.2000s", got.exit, c.wantExit, got.stderr)
			}
			keys := sentSMKeys(t, string(got.stderr))
			if len(keys) == 0 {
				t.Fatalf("no SA query in the -vv dump: %.2000s", got.stderr)
			}
			for _, k := range keys {
				if k != c.want {
					t.Errorf("an SA query carried SM_Key %s, want %s", k, c.want)
				}
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, `invalid --smkey "012x"`, "ibswitches", "--discovery", "sa", "--smkey", "012x")
	})
}

// sentMAD matches one MAD -vv dumps as sent to QP 1 (an SA query).
var sentMAD = regexp.MustCompile(`(?m)^sending to LID \d+ QP 1 \(status \d+\):\n((?:[0-9a-f]{8}  .*\n)+)`)

// sentSMKeys returns the SM_Key of each SA query a -vv dump shows sent,
// in hex.
func sentSMKeys(t *testing.T, dump string) []string {
	t.Helper()
	var keys []string
	for _, m := range sentMAD.FindAllStringSubmatch(dump, -1) {
		var b []byte
		for _, line := range strings.Split(strings.TrimSuffix(m[1], "\n"), "\n") {
			hexPart, _, _ := strings.Cut(line[10:], "|")
			raw, err := hex.DecodeString(strings.ReplaceAll(hexPart, " ", ""))
			if err != nil {
				t.Fatalf("dump line %q: %v", line, err)
			}
			b = append(b, raw...)
		}
		// Not an SA request: another class, or the RMPP ACK of a
		// response (RMPPType 2), which carries no SM_Key.
		if len(b) < 44 || b[1] != 0x03 || b[25] == 2 {
			continue
		}
		keys = append(keys, hex.EncodeToString(b[36:44]))
	}
	return keys
}

// TestSaqueryPythonRdma checks python-rdma's saquery options against
// infiniband-diags' saquery on the same fabric: --sa-path sends the
// queries to that SA (Hca2, LID 4, runs none), --sa changes nothing (saquery
// always asks the SA), --get asks SubnAdmGet for the one record, -f is -F.
func TestSaqueryPythonRdma(t *testing.T) {
	f := smallFabric(t)
	same := func(b []byte) []byte { return b }
	for _, c := range []struct{ ref, ours []string }{
		{[]string{"saquery", "NR"}, []string{"saquery", "--sa-path", "1", "NR"}},
		{[]string{"saquery", "-x"}, []string{"saquery", "--sa-path", "IBPath(DLID=1, SL=0)", "-x"}},
		{[]string{"saquery", "-p", "--slid", "2", "--dlid", "4"}, []string{"saquery", "--sa", "-p", "--slid", "2", "--dlid", "4"}},
		{[]string{"saquery", "NR", "4"}, []string{"saquery", "--get", "NR", "4"}},
		{[]string{"saquery", "PIR", "4/1"}, []string{"saquery", "--get", "PIR", "4/1"}},
		{[]string{"saquery", "-p", "--slid", "2", "--dlid", "4", "-F", "0"}, []string{"saquery", "-p", "--slid", "2", "--dlid", "4", "-f", "0"}},
	} {
		t.Run(strings.Join(c.ours, " "), func(t *testing.T) {
			sameOutput(t, f, "Hca1", same, c.ref, c.ours)
		})
	}
	t.Run("errors", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "to Lid 4: no response", "saquery", "--sa-path", "4", "-t", "100", "NR")
		// Every NodeRecord is more than one: the SA says so.
		ibtoolFails(t, f, "Hca1", 3, "ERR_TOO_MANY_RECORDS", "saquery", "--get", "NR")
		ibtoolFails(t, f, "Hca1", 2, "--get asks for one record", "saquery", "--get", "-s")
	})
}
