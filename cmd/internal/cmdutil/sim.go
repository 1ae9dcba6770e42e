package cmdutil

import (
	"context"
	"errors"
	"io/fs"

	"github.com/ibtool/ibtool/pkg/endport"
)

// simSysfs reads the simulator's attach point as the sysfs tree
// libumad2sim shows the C tools, one device, ibsim0
// (endport.Devices): the client holds one of ibsim's slots only for the
// few round trips this takes, and frees it even when ctx ends early
// (SIGINT, SIGTERM). Variables that do not parse are a usage error.
func (f *Factory) simSysfs(ctx context.Context) (fs.FS, string, error) {
	f.awaitSignals()
	devs, err := endport.Devices(ctx, endport.WithEnv(f.Getenv), endport.WithConfigFile(""), endport.WithSimulator(endport.SimOn))
	var oe *endport.OpenError
	switch {
	case errors.As(err, &oe) && oe.Step == endport.StepSetup:
		return nil, "", &UsageError{Err: oe.Err}
	case errors.As(err, &oe):
		return nil, "", oe.Err
	case err != nil:
		return nil, "", err
	}
	return devs.Tree(), devs.Root(), nil
}
