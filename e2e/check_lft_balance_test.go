package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckLFTBalanceMatchesReference feeds both tools the reference's
// dump_lfts output and ibnetdiscover cache of a fat tree, as they are and
// with two routes of a leaf moved to make it unbalanced.
func TestCheckLFTBalanceMatchesReference(t *testing.T) {
	f := fatTree(t)
	ctx := context.Background()
	dir := t.TempDir()
	lfts, errOut, exit, err := f.RunReference(ctx, "H-0001", "dump_lfts")
	if err != nil || exit != 0 {
		t.Fatalf("dump_lfts: exit %d, %v, %s", exit, err, errOut)
	}
	cache := filepath.Join(dir, "fabric.cache")
	if _, errOut, exit, err := f.RunReference(ctx, "H-0001", "ibnetdiscover", "--cache", cache); err != nil || exit != 0 {
		t.Fatalf("ibnetdiscover --cache: exit %d, %v, %s", exit, err, errOut)
	}
	balanced := filepath.Join(dir, "balanced")
	os.WriteFile(balanced, lfts, 0o644)
	// Move two of S-leaf-2's host routes from port 19 to port 20.
	var moved []string
	section, n := "", 0
	for _, l := range strings.Split(string(lfts), "\n") {
		if strings.Contains(l, "Unicast") {
			section = l
		}
		if strings.Contains(section, "(S-leaf-2)") && strings.Contains(l, " 019 : (Channel") && n < 2 {
			l = strings.Replace(l, " 019 : ", " 020 : ", 1)
			n++
		}
		moved = append(moved, l)
	}
	if n != 2 {
		t.Fatalf("moved %d routes of S-leaf-2, want 2", n)
	}
	unbalanced := filepath.Join(dir, "unbalanced")
	os.WriteFile(unbalanced, []byte(strings.Join(moved, "\n")), 0o644)
	for _, lft := range []string{balanced, unbalanced} {
		for _, flags := range [][]string{{}, {"-v"}, {"-e"}, {"-e", "-v"}} {
			args := append([]string{"-l", lft, "-i", cache}, flags...)
			t.Run(filepath.Base(lft)+" "+strings.Join(flags, " "), func(t *testing.T) {
				compareExit(t, f, "H-0001", 0, "check_lft_balance", args...)
			})
		}
	}
	out, _, _, _ := f.RunIbtool(ctx, ibtoolBin, "H-0001", "check_lft_balance", "-l", unbalanced, "-i", cache)
	if !strings.Contains(string(out), "Unbalanced Switch Port Usage: S-leaf-2") {
		t.Errorf("the unbalanced leaf is not reported:\n%s", out)
	}
}
