package e2e

import (
	"context"
	"encoding/json"
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
	// From the SA: the fabric and the tables (LFTRecords, MFTRecords) in
	// a few queries, the blocks the SA has no record of by SMP; the same
	// text as infiniband-diags' directed-route dump.
	t.Run("discovery sa", func(t *testing.T) {
		mask := func(b []byte) []byte { return b }
		for _, a := range [][]string{{"dump_lfts"}, {"dump_mfts"}, {"dump_lfts", "-n"}, {"dump_fts", "-M", "-a"}} {
			sameOutput(t, f, "Hca1", mask, a, append(append([]string{}, a...), "--discovery", "sa"))
		}
		ft := fatTree(t)
		for _, a := range [][]string{{"dump_lfts"}, {"dump_fts", "-M", "-a", "0xc000", "0xc040"}} {
			sameOutput(t, ft, "H-0001", mask, a, append(append([]string{}, a...), "--discovery", "sa"))
		}
	})
}

// TestFabricToolsJSON checks the --json documents of dump_fts and
// ibfindnodesusing against what their text says.
func TestFabricToolsJSON(t *testing.T) {
	f := smallFabric(t)
	ctx := context.Background()
	out, errOut, exit, err := f.RunIbtool(ctx, ibtoolBin, "Hca1", "dump_fts", "--json")
	if err != nil || exit != 0 {
		t.Fatalf("dump_fts --json: exit %d, %v, %s", exit, err, errOut)
	}
	var switches []struct {
		Description string `json:"description"`
		Entries     []struct {
			LID         int    `json:"lid"`
			Port        int    `json:"port"`
			Destination string `json:"destination"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(out, &switches); err != nil {
		t.Fatal(err)
	}
	if len(switches) != 2 || switches[0].Description != "Switch2" {
		t.Fatalf("switches: %+v", switches)
	}
	found := false
	for _, e := range switches[0].Entries {
		if e.LID == 4 && e.Port == 1 && e.Destination == "Hca2" {
			found = true
		}
	}
	if !found {
		t.Errorf("Switch2 has no entry LID 4 -> port 1 (Hca2): %+v", switches[0].Entries)
	}

	out, errOut, exit, err = f.RunIbtool(ctx, ibtoolBin, "Hca1", "ibfindnodesusing", "--json", "--cache-dir", t.TempDir(), "0x200001", "3")
	if err != nil || exit != 0 {
		t.Fatalf("ibfindnodesusing --json: exit %d, %v, %s", exit, err, errOut)
	}
	var fnu struct {
		RoutedOut []string `json:"routedOut"`
		RoutedIn  []string `json:"routedIn"`
	}
	if err := json.Unmarshal(out, &fnu); err != nil {
		t.Fatal(err)
	}
	if strings.Join(fnu.RoutedOut, " ") != "Hca1" || strings.Join(fnu.RoutedIn, " ") != "Hca2" {
		t.Errorf("routed out %q, in %q; want Hca1, Hca2", fnu.RoutedOut, fnu.RoutedIn)
	}
}
