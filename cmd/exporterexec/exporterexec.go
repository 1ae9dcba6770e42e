package exporterexec

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// Binary is the exporter's program name.
const Binary = "ibtool-exporter"

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:        "exporter",
		Summary:     "serve the fabric's port counters as Prometheus metrics (runs " + Binary + ")",
		New:         func(f *cmdutil.Factory) *cobra.Command { return newExporterCmd(f, nil) },
		SignalIsEnd: true,
	})
}

// ErrNotInstalled is wrapped by the error of a run that finds no
// ibtool-exporter.
var ErrNotInstalled = errors.New(Binary + " is not installed")

// exporterOptions are what the run needs: the arguments, passed on as
// they are, and how to find and start the binary (tests replace them).
type exporterOptions struct {
	Args []string
	// Executable is os.Executable; LookPath is exec.LookPath; Exec is
	// syscall.Exec, which replaces the process (signals and the exit
	// status are the exporter's own).
	Executable func() (string, error)
	LookPath   func(file string) (string, error)
	Exec       func(path string, argv []string, env []string) error
	Environ    func() []string
}

func newExporterCmd(f *cmdutil.Factory, runF func(*exporterOptions) error) *cobra.Command {
	o := &exporterOptions{Executable: os.Executable, LookPath: exec.LookPath, Exec: syscall.Exec, Environ: os.Environ}
	c := &cobra.Command{
		Use:   "exporter [options]",
		Short: "serve the fabric's port counters as Prometheus metrics (runs " + Binary + ")",
		Long: `exporter runs ` + Binary + ` with the same arguments: the exporter is its own
binary, built and installed beside ibtool, so that ibtool's one-shot tools
do not carry its HTTP server. '` + Binary + ` --help' lists its options
(docs/exporter.md). ` + Binary + ` is looked for in ibtool's own directory,
then in PATH.`,
		// Every argument, --help and --version included, is the
		// exporter's.
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			o.Args = args
			if runF != nil {
				return runF(o)
			}
			return exporterRun(o)
		},
	}
	return c
}

// find returns the path of ibtool-exporter: beside the running binary
// (symlinks resolved), else in PATH.
func (o *exporterOptions) find() (string, error) {
	if self, err := o.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), Binary)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := o.LookPath(Binary)
	if err != nil {
		return "", fmt.Errorf("%w: not beside ibtool nor in PATH (make build builds bin/%s; the ibtool package installs it)", ErrNotInstalled, Binary)
	}
	return p, nil
}

// exporterRun replaces the process with ibtool-exporter; it returns only
// when that fails.
func exporterRun(o *exporterOptions) error {
	p, err := o.find()
	if err != nil {
		return err
	}
	argv := append([]string{Binary}, o.Args...)
	if err := o.Exec(p, argv, o.Environ()); err != nil {
		return fmt.Errorf("running %s: %w", p, err)
	}
	return nil
}
