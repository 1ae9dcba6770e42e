package exporter

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockFile takes the lock, fails to take it again while held (as a
// second cron run would) and takes it once it is released.
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ib.lock")
	unlock, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockFile(path); !errors.Is(err, errLocked) {
		t.Errorf("second lock while held: %v, want %v", err, errLocked)
	}
	unlock()
	unlock2, err := lockFile(path)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
	if _, err := lockFile(filepath.Join(t.TempDir(), "missing", "ib.lock")); err == nil {
		t.Error("lock in a missing directory: no error")
	}
}

// TestRunOnceLocked checks that --exporter.runonce fails, without
// sweeping, while another run holds the lock file.
func TestRunOnceLocked(t *testing.T) {
	o, out, _ := fakeRun(t, []string{"--exporter.runonce"})
	unlock, err := lockFile(o.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := exporterRun(o); !errors.Is(err, errLocked) {
		t.Errorf("exporterRun with the lock held: %v, want %v", err, errLocked)
	}
	if out.Len() != 0 {
		t.Errorf("metrics written while locked:\n%s", out)
	}
}

// TestIgnoredFlagsLogged checks that each of infiniband_exporter's flags
// that ibtool ignores is named once on standard error when given.
func TestIgnoredFlagsLogged(t *testing.T) {
	o, _, errOut := fakeRun(t, []string{"--exporter.runonce", "--sudo", "--perfquery.path", "/usr/sbin/perfquery"})
	_ = exporterRun(o) // runFabric's leaf does not answer for a port
	for _, name := range []string{"sudo", "perfquery.path"} {
		line := "exporter: --" + name + " is infiniband_exporter's and has no use here (ibtool reads the fabric itself): ignored\n"
		if n := strings.Count(errOut.String(), line); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", line, n, errOut)
		}
	}
	if strings.Contains(errOut.String(), "--collector.ibswinfo") {
		t.Errorf("a flag not given is logged:\n%s", errOut)
	}
}
