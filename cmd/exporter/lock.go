package exporter

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// errLocked is wrapped by lockFile's error when another process holds
// the lock.
var errLocked = errors.New("locked by another run")

// lockFile takes an exclusive flock on path (created when missing)
// without waiting, as infiniband_exporter's --exporter.lockfile does: two
// runs from cron never overlap. unlock releases it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock file %s: %w", path, errLocked)
		}
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
