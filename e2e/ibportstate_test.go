package e2e

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
)

func TestIbportstateMatchesReference(t *testing.T) {
	f := smallFabric(t)
	args := [][]string{
		{"2", "1"}, {"-K", "2", "1"}, {"3", "0"}, {"1", "0"}, {"0x2", "0x1", "query"},
		{"-D", "0", "1"}, {"-D", "0,1", "0"},
		{"-D", "0,1", "1"}, {"-D", "0,1,3", "2"}, // active switch ports: the peer too
	}
	for _, h := range []string{"Hca1", "Switch2"} {
		for _, a := range args {
			if h != "Hca1" && slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "0,") }) {
				continue // DR paths from Hca1
			}
			t.Run(h+" "+strings.Join(a, " "), func(t *testing.T) {
				sameAsReference(t, f, h, "ibportstate", a...)
			})
		}
	}
	// A Set of nothing but no-ops: it still writes the placeholder LIDs
	// infiniband-diags writes into a switch port's PortInfo, so make that
	// happen once before comparing.
	set := []string{"-D", "0,1", "1", "width", "0", "speed", "0"}
	once := func() {
		if _, errOut, exit, err := f.RunIbtool(context.Background(), ibtoolBin, "Hca1", "ibportstate", set...); err != nil || exit != 0 {
			t.Fatalf("ibportstate %q: exit %d, %v: %s", set, exit, err, errOut)
		}
	}
	t.Run("Hca1 "+strings.Join(set, " "), func(t *testing.T) {
		once()
		sameAsReference(t, f, "Hca1", "ibportstate", set...)
	})
}

// TestIbportstatePeerByLID checks what happens when the peer of a switch
// port addressed by LID needs a combined route, which ibsim does not
// route: the same output as infiniband-diags up to that point, then one
// error line saying why, exit 3.
func TestIbportstatePeerByLID(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	ref, _, refExit, err := f.RunReference(ctx, "Hca1", "ibportstate", "3", "1")
	if err != nil || refExit == 0 {
		t.Fatalf("reference: exit %d, %v", refExit, err)
	}
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibportstate", "3", "1")
	if err != nil {
		t.Fatal(err)
	}
	msg := string(errOut)
	if exit != 3 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "peer port: ") || !strings.Contains(msg, "DR path slid 2; dlid 65535; 0,1") {
		t.Errorf("exit %d, stderr %q; want exit 3 and one line about the peer port's combined route", exit, msg)
	}
	if len(out) == 0 || !bytes.HasPrefix(ref, out) {
		t.Errorf("stdout is not the start of infiniband-diags':\n%s\nreference:\n%s", out, ref)
	}
}

func TestIbportstateErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{2, "invalid operation: bogus", []string{"2", "1", "bogus"}},
		{2, "speed requires an additional parameter", []string{"2", "1", "speed"}},
		{2, `invalid speed value "16": out of range 0 to 15`, []string{"2", "1", "speed", "16"}},
		{2, `invalid lid value "0xc000"`, []string{"2", "1", "lid", "0xc000"}},
		{2, "only one of query, enable", []string{"2", "1", "enable", "disable"}},
		{2, "can't set M_Key fields on switch port 1", []string{"3", "1", "mkeylease", "5"}},
		{3, "SubnGet(NodeInfo) to Lid 9: no response", []string{"9", "1"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "ibportstate", tt.args...)
		})
	}
}
