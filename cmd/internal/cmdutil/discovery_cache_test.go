package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func TestExpandCacheName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"disc", "disc"},
		{"~/.ibtools.cache-$A", "~/.ibtools.cache-mlx5_0-2"},
		{"$C/$P", "mlx5_0/2"},
		{"${CA}-${PORT}.json", "mlx5_0-2.json"},
		{"$CA$P", "mlx5_02"}, // an identifier ends at the next $
		{"$Cx-$$-$other-${x}", "$Cx-$-$other-${x}"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, expandCacheName(tt.name, "mlx5_0", 2)); diff != "" {
			t.Errorf("expandCacheName(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestDiscoveryCache: a cache file that is there is read instead of
// discovering; none, or --refresh-cache, discovers (here: fails to open
// the fake's transport); a scan from a node never reads it.
func TestDiscoveryCache(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "pkg", "subnet", "testdata", "2sw2path4hca.hca1.cache"))
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "disc")
	if err := os.WriteFile(cache, b, 0o644); err != nil {
		t.Fatal(err)
	}
	errNoFabric := errors.New("no fabric here")
	f, _, _ := NewTestFactory(nil)
	o := &CommonOptions{Open: func() (*madrpc.Transactor, *rdma.Port, error) { return nil, nil, errNoFabric }}
	tests := []struct {
		name     string
		d        DiscoveryOptions
		from     []uint8
		discover bool
	}{
		{"cached", DiscoveryOptions{Cache: cache}, nil, false},
		{"refresh", DiscoveryOptions{Cache: cache, RefreshCache: true}, nil, true},
		{"missing", DiscoveryOptions{Cache: filepath.Join(dir, "none")}, nil, true},
		{"from a node", DiscoveryOptions{Cache: cache}, []uint8{0, 1}, true},
		{"ibnetdiscover", DiscoveryOptions{Cache: cache, WritesCache: true}, nil, true},
		{"no cache", DiscoveryOptions{}, nil, true},
	}
	for _, tt := range tests {
		fab, err := f.DiscoverFabric("test", o, &tt.d, tt.from)
		if discovered := errors.Is(err, errNoFabric); discovered != tt.discover {
			t.Errorf("%s: discovered %v, want %v (fabric %v, error %v)", tt.name, discovered, tt.discover, fab != nil, err)
		}
		if !tt.discover && (fab == nil || len(fab.Nodes) != 6) {
			t.Errorf("%s: fabric %+v from the cache, want the 6 nodes", tt.name, fab)
		}
	}

	// What is saved is read back the same, in either format; a partial
	// discovery is not saved.
	fab, err := f.DiscoverFabric("test", o, &DiscoveryOptions{Cache: cache}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"again", "again.json"} {
		out := filepath.Join(dir, name)
		if err := f.saveCached("test", o, fab, out); err != nil {
			t.Fatal(err)
		}
		back, err := LoadFabric(out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(back.Nodes) != len(fab.Nodes) {
			t.Errorf("%s: %d nodes read back, want %d", name, len(back.Nodes), len(fab.Nodes))
		}
	}
	fab.Errors = append(fab.Errors, &subnet.QueryError{Query: "NodeInfo", Path: []uint8{0, 1}})
	if err := f.saveCached("test", o, fab, filepath.Join(dir, "partial")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partial")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a partial discovery was saved: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d files in the cache directory, want disc, again, again.json (no .new- left)", len(entries))
	}
}
