package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestIblinkinfoMatchesReference compares iblinkinfo's forms on the
// two-switch fabric and a fat tree.
func TestIblinkinfoMatchesReference(t *testing.T) {
	f := smallFabric(t)
	for _, host := range []string{"Hca1", "Hca4"} {
		for _, args := range [][]string{
			{}, {"-d"}, {"-l"}, {"-p"}, {"--switches-only"}, {"--cas-only"}, {"-l", "-d", "-p"},
			{"-D", "0,1"}, {"-D", "0,1,3"}, {"-D", "0,1", "-n", "2"}, {"--down", "--line"},
		} {
			t.Run(host+" "+strings.Join(args, " "), func(t *testing.T) {
				sameAsReference(t, f, host, "iblinkinfo", args...)
			})
		}
	}
	t.Run("fat tree", func(t *testing.T) {
		ft := fatTree(t)
		for _, args := range [][]string{{}, {"-l"}, {"--switches-only", "-p"}, {"-D", "0,1,19"}} {
			sameAsReference(t, ft, "H-0001", "iblinkinfo", args...)
		}
	})
}

// TestIblinkinfoByGUID: -S prints the node that holds the port GUID, the
// same lines as in the full report. (infiniband-diags resolves the GUID
// through the SA and scans from there by combined routes, which ibsim does
// not carry: it hangs there.)
func TestIblinkinfoByGUID(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	all, _, _, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ guid, header string }{
		{"0x200001", "Switch: 0x0000000000200001 Switch2:\n"},
		{"0x0000000000100004", "CA: Hca2:\n"},
	} {
		out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "iblinkinfo", "-S", c.guid)
		if err != nil || exit != 0 || len(errOut) != 0 {
			t.Fatalf("-S %s: exit %d, %v, %s", c.guid, exit, err, errOut)
		}
		i := bytes.Index(all, []byte(c.header))
		if !bytes.HasPrefix(out, []byte(c.header)) || i < 0 || !bytes.HasPrefix(all[i:], out) {
			t.Errorf("-S %s printed %q; want its section of the full report", c.guid, out)
		}
	}
	t.Run("unknown GUID", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 3, "no port with GUID 0x0000000000999999 in the fabric", "iblinkinfo", "-S", "0x999999")
	})
	t.Run("bad GUID", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, `invalid port GUID "xyz"`, "iblinkinfo", "-S", "xyz")
	})
}
