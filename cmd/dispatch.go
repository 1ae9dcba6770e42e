package cmd

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
)

// Main runs ibtool with the process arguments and returns the exit code.
// args[0] names a tool when ibtool is reached through a symlink
// ("perfquery 12 1"); otherwise args[1] does ("ibtool perfquery 12 1"), and
// with no argument ibtool lists its tools.
func Main(args []string, f *Factory) int {
	if len(args) == 0 {
		args = []string{"ibtool"}
	}
	r := newRun(f)
	defer r.stop()
	if t, err := Lookup(filepath.Base(args[0])); err == nil {
		tf := r.factoryFor(t)
		return r.execute(tf, t, t.Name, ToolCommand(tf, t), args[1:])
	}
	if len(args) > 1 && !isFlag(args[1]) {
		if t, err := Lookup(args[1]); err == nil {
			// "ibtool TOOL ...": the root holds that tool alone. Building
			// all of them took 3 ms of every run, more than some tools'
			// own work.
			tf := r.factoryFor(t)
			return r.execute(tf, t, "ibtool", newRoot(tf, []Tool{t}), args[1:])
		}
	}
	root := NewRootCommand(f)
	if len(args) > 1 {
		name := args[1]
		if !isFlag(name) && !isBuiltin(root, name) {
			_, err := Lookup(name)
			RenderError(f.IO.ErrOut, "ibtool", err, 0)
			return ExitCode(err)
		}
	}
	return r.execute(f, Tool{SignalIsEnd: true}, "ibtool", root, args[1:])
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

func isBuiltin(root *cobra.Command, name string) bool {
	switch name {
	case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return true
	}
	for _, c := range root.Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// execute runs c with args and turns its error into a message and exit
// code, written to the unfiltered error stream: f's streams may be muted by
// then (see run).
func (r *run) execute(f *Factory, t Tool, name string, c *cobra.Command, args []string) int {
	c.SetArgs(args)
	c.SetIn(f.IO.In)
	c.SetOut(f.IO.Out)
	c.SetErr(f.IO.ErrOut)
	ran, err := c.ExecuteContextC(r.ctx)
	r.settle()
	err = withCause(r.ctx, err, t.SignalIsEnd)
	if err == nil {
		return ExitOK
	}
	verbosity := 0
	if ran != nil {
		v, _ := ran.Flags().GetCount("verbose")
		d, _ := ran.Flags().GetCount("debug")
		verbosity = v + d
		if ran != c {
			name = ran.Name()
		}
	}
	RenderError(r.errOut, name, err, verbosity)
	var usage *UsageError
	if errors.As(err, &usage) && usage.Syntax && ran != nil {
		fmt.Fprintf(r.errOut, "Run '%s --help' for usage.\n", ran.CommandPath())
	}
	return ExitCode(err)
}

// NewRootCommand returns "ibtool" with every tool and the built-in commands below it.
func NewRootCommand(f *Factory) *cobra.Command {
	root := newRoot(f, Tools())
	root.AddCommand(newLinksCmd(f), newCompletionCmd(f, root))
	return root
}

// newRoot returns "ibtool" with the tools given below it.
func newRoot(f *Factory, tools []Tool) *cobra.Command {
	root := &cobra.Command{
		Use:           "ibtool",
		Short:         "InfiniBand diagnostics in one binary",
		Long:          "ibtool runs the InfiniBand diagnostic tools of infiniband-diags and python-rdma.\nRun a tool as 'ibtool TOOL ARGS' or through a symlink named after it ('ibtool links DIR').",
		Version:       f.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return listTools(f)
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(flagError)
	for _, t := range tools {
		root.AddCommand(ToolCommand(f, t))
	}
	return root
}

// ToolCommand builds t's command with the behaviour every tool shares:
// silent cobra errors (RenderError prints them), flag errors as usage
// errors, and -V/--version.
func ToolCommand(f *Factory, t Tool) *cobra.Command {
	c := t.New(f)
	if c.Short == "" {
		c.Short = t.Summary
	}
	c.SilenceErrors = true
	c.SilenceUsage = true
	c.CompletionOptions.DisableDefaultCmd = true
	c.Version = f.Version
	c.SetVersionTemplate(fmt.Sprintf("%s (ibtool) {{.Version}}\n", t.Name))
	if c.Flags().Lookup("version") == nil {
		c.Flags().BoolP("version", "V", false, "print the version")
	}
	c.SetFlagErrorFunc(flagError)
	return c
}
