package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIbcacheeditMatchesReference edits a cache with both tools and
// compares the files byte for byte.
func TestIbcacheeditMatchesReference(t *testing.T) {
	f := smallFabric(t)
	orig, _ := writeCaches(t, f, "Hca1")
	dir := t.TempDir()
	ctx := context.Background()
	for i, edit := range [][]string{
		{"--switchguid", "0x200001:0x200099"},
		{"--caguid", "0x100003:0x100033"},
		{"--sysimgguid", "0x100006:0x1234"},
		{"--portguid", "0x100000:0x100001:0x100011"},
		{"--portguid", "0x200000:0x200000:0x200055"},
		{"--switchguid", "0x200001:0x200099", "--caguid", "0x100003:0x100033", "--sysimgguid", "0x100006:0x1234"},
	} {
		t.Run(strings.Join(edit, " "), func(t *testing.T) {
			ref, ours := filepath.Join(dir, "ref"+string(rune('a'+i))), filepath.Join(dir, "ours"+string(rune('a'+i)))
			if _, errOut, exit, err := f.RunReference(ctx, "Hca1", "ibcacheedit", append(edit, orig, ref)...); err != nil || exit != 0 {
				t.Fatalf("reference: exit %d, %v, %s", exit, err, errOut)
			}
			if out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibcacheedit", append(edit, orig, ours)...); err != nil || exit != 0 || len(out)+len(errOut) != 0 {
				t.Fatalf("ibtool: exit %d, %v, %s%s", exit, err, out, errOut)
			}
			a, _ := os.ReadFile(ref)
			b, _ := os.ReadFile(ours)
			if !bytes.Equal(a, b) {
				t.Errorf("edited caches differ: %d bytes from infiniband-diags, %d from ibtool", len(a), len(b))
			}
		})
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--switchguid", "0x999:0x1"}, "switchguid = 999 not found"},
		{[]string{"--portguid", "0x100000:0x999:0x1"}, "portguid = 999 not found"},
		{[]string{"--portguid", "0x777:0x999:0x1"}, "nodeguid = 777 not found"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			ibtoolFails(t, f, "Hca1", 3, c.msg, "ibcacheedit", append(c.args, orig, filepath.Join(dir, "x"))...)
		})
	}
	t.Run("bad edit", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, `--caguid "0x1": want BEFOREGUID:AFTERGUID`, "ibcacheedit", "--caguid", "0x1", orig, filepath.Join(dir, "x"))
	})
}
