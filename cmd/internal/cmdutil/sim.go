package cmdutil

import (
	"context"
	"io/fs"

	"github.com/ibtool/ibtool/pkg/mad/ibsim"
)

// simSysfs attaches to ibsim as the environment says (IBSIM_SOCKNAME,
// IBSIM_SERVER_NAME/PORT, SIM_HOST), reads the attach point and
// disconnects, returning the attach point as the sysfs tree libumad2sim
// shows the C tools: one device, ibsim0. The client holds one of ibsim's
// slots only for the few round trips this takes, and Close frees it even
// when ctx ends early (SIGINT, SIGTERM).
func (f *Factory) simSysfs(ctx context.Context) (fs.FS, string, error) {
	cfg, err := ibsim.FromEnv(f.Getenv)
	if err != nil {
		return nil, "", &UsageError{Err: err}
	}
	c, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	fsys := c.SysFS()
	if err := c.Close(); err != nil {
		return nil, "", err
	}
	return fsys, ibsim.DeviceName + " (simulator)", nil
}
