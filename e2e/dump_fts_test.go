package e2e

import (
	"strings"
	"testing"
)

// TestDumpFtsMatchesReference compares dump_fts and its dump_lfts and
// dump_mfts wrappers on the two-switch fabric and a fat tree with LMC 1.
func TestDumpFtsMatchesReference(t *testing.T) {
	f := smallFabric(t)
	for _, args := range [][]string{
		{"dump_fts"}, {"dump_fts", "-a"}, {"dump_fts", "-n"}, {"dump_fts", "2", "4"},
		{"dump_fts", "-M"}, {"dump_fts", "-M", "-a"}, {"dump_fts", "-M", "-n", "-a"}, {"dump_fts", "-M", "0xc000", "0xc010", "-a"},
		{"dump_lfts"}, {"dump_mfts"}, {"dump_lfts", "-n"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", args[0], args[1:]...)
		})
	}
	t.Run("fat tree", func(t *testing.T) {
		ft := fatTree(t)
		for _, args := range [][]string{{"dump_fts"}, {"dump_fts", "-M", "-a", "0xc000", "0xc040"}, {"dump_lfts", "-n"}} {
			sameAsReference(t, ft, "H-0001", args[0], args[1:]...)
		}
	})
}
