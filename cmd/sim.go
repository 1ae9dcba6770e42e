package cmd

import (
	"errors"
	"io/fs"
)

// simSysfs connects to ibsim, reads the attach point and disconnects.
func (f *Factory) simSysfs() (fs.FS, string, error) {
	return nil, "", errors.New("simulator device view: not wired yet")
}
