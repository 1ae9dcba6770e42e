package cmdutil

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// TestKeptTopologyRead: a kept file is reused as text unless Regenerate;
// a fresh discovery comes back as its fabric, its -g text kept; a
// failed discovery keeps nothing; a partial discovery's error comes with
// its fabric.
func TestKeptTopologyRead(t *testing.T) {
	ff, err := subnettest.FromNet("Switch 2 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[1]\n", "H")
	if err != nil {
		t.Fatal(err)
	}
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{})
	defer x.Close()
	fab, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	errPartial, errDown := errors.New("partial"), errors.New("down")
	dir := t.TempDir()
	kept := filepath.Join(dir, "ibnetdiscover-mlx5_0-1.topology")
	k := &KeptTopology{Dir: dir, CA: "mlx5_0", Port: 1, Discover: func() (*subnet.Fabric, error) { return nil, errDown }}

	if text, got, err := k.Read(); text != nil || got != nil || !errors.Is(err, errDown) {
		t.Errorf("failed discovery: %q %v %v", text, got, err)
	}
	if _, err := os.Stat(kept); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed discovery kept a file: %v", err)
	}

	k.Discover = func() (*subnet.Fabric, error) { return fab, errPartial }
	text, got, err := k.Read()
	if text != nil || got != fab || !errors.Is(err, errPartial) {
		t.Errorf("fresh discovery: %q %v %v", text, got, err)
	}
	b, err := os.ReadFile(kept)
	if err != nil || !strings.Contains(string(b), "Switch\t2 \"S-0000000000200000\"") {
		t.Errorf("kept topology %q, %v", b, err)
	}

	k.Discover = func() (*subnet.Fabric, error) { t.Error("discovered again"); return nil, errDown }
	if text, got, err := k.Read(); string(text) != string(b) || got != nil || err != nil {
		t.Errorf("reuse: %q %v %v", text, got, err)
	}

	k.Regenerate, k.Text = true, func() ([]byte, error) { return []byte("Switch\n"), nil }
	if text, got, err := k.Read(); string(text) != "Switch\n" || got != nil || err != nil {
		t.Errorf("given text: %q %v %v", text, got, err)
	}
	if b, err := os.ReadFile(kept); string(b) != "Switch\n" || err != nil {
		t.Errorf("given text kept as %q, %v", b, err)
	}
}
