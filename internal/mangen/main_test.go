package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenerate writes every page and checks that each is titled after
// its own command (man shows the title in its header and footer) and that
// the exporter's binary has its page.
func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.8"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".8")
		seen[name] = true
		want := `.TH "` + strings.ToUpper(name) + `" "8"`
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: no %s line", filepath.Base(p), want)
		}
	}
	for _, name := range []string{"ibtool", "ibtool-exporter", "perfquery", "ibdmchk"} {
		if !seen[name] {
			t.Errorf("no page %s.8 among %d", name, len(pages))
		}
	}
}
