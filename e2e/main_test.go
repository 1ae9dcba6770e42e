package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// ibtoolBin is the ibtool binary under test; linkDir holds a symlink to it
// for every tool.
var ibtoolBin, linkDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ibtool-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := setup(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
	} else {
		code = simfabric.Run(m)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// setup finds or builds ibtool and ibtool-exporter (beside it, where
// "ibtool exporter" finds it) and makes the tool symlinks in dir.
func setup(dir string) error {
	ibtoolBin = os.Getenv("IBTOOL_BIN")
	if ibtoolBin == "" {
		ibtoolBin = filepath.Join(dir, "ibtool")
		for pkg, out := range map[string]string{"github.com/ibtool/ibtool": ibtoolBin, "github.com/ibtool/ibtool/cmd/ibtool-exporter": filepath.Join(dir, "ibtool-exporter")} {
			build := exec.Command("go", "build", "-o", out, pkg)
			build.Stderr = os.Stderr
			if err := build.Run(); err != nil {
				return fmt.Errorf("building %s: %w", pkg, err)
			}
		}
	} else if _, err := os.Stat(filepath.Join(filepath.Dir(ibtoolBin), "ibtool-exporter")); err != nil {
		return fmt.Errorf("IBTOOL_BIN=%s: no ibtool-exporter beside it (make build builds both): %w", ibtoolBin, err)
	}
	abs, err := filepath.Abs(ibtoolBin)
	if err != nil {
		return err
	}
	ibtoolBin = abs
	linkDir = filepath.Join(dir, "links")
	if err := os.Mkdir(linkDir, 0o755); err != nil {
		return err
	}
	links := exec.Command(ibtoolBin, "links", linkDir)
	if out, err := links.CombinedOutput(); err != nil {
		return fmt.Errorf("ibtool links %s: %w\n%s", linkDir, err, out)
	}
	return nil
}
