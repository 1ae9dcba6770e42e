package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeNameMap runs the tools that print node names with a node name
// map, as infiniband-diags does with the same file.
func TestNodeNameMap(t *testing.T) {
	f := smallFabric(t)
	m := filepath.Join(t.TempDir(), "ib-node-name-map")
	content := "# names for the small fabric\n0x0000000000200001 \"leaf two\"\n0x0000000000100000 \"host one\" # Hca1\n0x0000000000100003 hca2 # unquoted\n"
	if err := os.WriteFile(m, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range [][]string{
		{"ibroute", "--node-name-map", m, "3"},
		{"ibroute", "--node-name-map", m, "1"},
		{"smpquery", "--node-name-map", m, "nodedesc", "3"},
		{"smpquery", "--node-name-map", m, "nodedesc", "4"},
		{"ibtracert", "--node-name-map", m, "2", "4"},
	} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			sameAsReference(t, f, "Hca1", a[0], a[1:]...)
		})
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("nonsense \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("bad map", func(t *testing.T) {
		ibtoolFails(t, f, "Hca1", 2, "bad:1: want a GUID and a name", "ibroute", "--node-name-map", bad, "3")
	})
}
