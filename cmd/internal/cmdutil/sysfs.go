package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// UseSim reports whether tools talk to the ibsim simulator instead of the
// kernel: --sim, IBTOOL_SIM=1, or IBSIM_SOCKNAME set (as for the C tools
// under the shim).
func (f *Factory) UseSim(o *CommonOptions) bool {
	return o.Sim || endport.SimulatorFromEnv(f.Getenv)
}

// LocalSysfs returns the sysfs tree that local tools (ibstat, ibstatus,
// ibv_devices) read, and the path it stands for, used in messages. On the
// simulator it is the attach point presented as device ibsim0, exactly as
// libumad2sim presents it to the C tools; otherwise the directory named by
// --sysfs, $IBTOOL_SYSFS, or /sys. A directory named by the flag or the
// variable must be there: a mistyped one would otherwise read as a machine
// without RDMA devices.
func (f *Factory) LocalSysfs(o *CommonOptions) (fs.FS, string, error) {
	if f.UseSim(o) {
		return f.simSysfs(o.Context())
	}
	root, named := o.Sysfs, "--sysfs "
	if root == "" {
		root, named = f.Getenv("IBTOOL_SYSFS"), "IBTOOL_SYSFS="
	}
	if root == "" {
		return os.DirFS("/sys"), "/sys", nil
	}
	if err := checkSysfsRoot(named+root, root); err != nil {
		return nil, "", err
	}
	return os.DirFS(root), root, nil
}

// checkSysfsRoot checks that root is a directory (after symbolic links);
// what says where it came from, "--sysfs DIR" or "IBTOOL_SYSFS=DIR". One
// that is not there or not a directory is a usage error.
func checkSysfsRoot(what, root string) error {
	const want = "; want the sysfs mount point, such as /sys"
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return UsageErrorf("%s: no such directory%s", what, want)
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case !fi.IsDir():
		return UsageErrorf("%s: not a directory%s", what, want)
	}
	return nil
}

// OpenLocalSysfs opens the device tree the local tools read.
func OpenLocalSysfs(f *Factory, o *CommonOptions) (*rdma.FS, error) {
	fsys, root, err := f.LocalSysfs(o)
	if err != nil {
		return nil, err
	}
	return rdma.NewFS(fsys, root), nil
}

// SysfsProblems collects what a local tool could not read while it went on
// to print the rest. infiniband-diags prints a default in place of a value
// it cannot read ("unknown", a GUID of 0, an empty firmware version) and
// says nothing; ibtool prints the same default, so the output stays that
// of infiniband-diags, and then says what it could not read and exits 3.
type SysfsProblems struct{ errs []error }

// Add records a problem, usually a *rdma.SysError naming the file. A
// *rdma.SkippedError adds each entry it left out.
func (p *SysfsProblems) Add(err error) {
	var skipped *rdma.SkippedError
	if errors.As(err, &skipped) {
		p.errs = append(p.errs, skipped.Unwrap()...)
		return
	}
	p.errs = append(p.errs, err)
}

// AddAll records every error in errs.
func (p *SysfsProblems) AddAll(errs []error) {
	for _, err := range errs {
		p.Add(err)
	}
}

// Result is what the tool returns: err, its own error (nil when it ran to
// the end), after the problems. RenderError writes one line for each, and
// the exit code is the highest of them: 3 for a file that did not read.
func (p *SysfsProblems) Result(err error) error {
	if len(p.errs) == 0 {
		return err
	}
	return errors.Join(append(p.errs, err)...)
}
