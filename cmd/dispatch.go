package cmd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// Main runs ibtool with the process arguments and returns the exit code.
// args[0] names a tool when ibtool is reached through a symlink
// ("perfquery 12 1"); otherwise args[1] does ("ibtool perfquery 12 1"), and
// with no argument ibtool lists its tools. A program name that is neither
// a tool nor ibtool's own (isIbtoolName), an unknown tool after "ibtool",
// and "ibtool help" of one are usage errors: one line naming the tool,
// exit 2.
func Main(args []string, f *cmdutil.Factory) int {
	if len(args) == 0 {
		args = []string{"ibtool"}
	}
	prog := filepath.Base(args[0])
	if _, ok := cmdutil.Find(prog); ok {
		return cmdutil.RunTool(args, f)
	}
	if !isIbtoolName(prog) {
		// A symlink with a name that is no tool: listing the tools, or
		// taking args[1] for the tool, would run what was not asked for.
		return unknownTool(f, prog)
	}
	if leanRoot(f, args[1:]) {
		return runLean(f, args[1:])
	}
	r := cmdutil.NewRun(f)
	defer r.Stop()
	if len(args) > 1 && !isFlag(args[1]) {
		if t, ok := cmdutil.Find(args[1]); ok {
			// "ibtool TOOL ...": the root holds that tool alone, so a
			// run pays for building one command, not every tool's.
			tf := r.FactoryFor(t)
			return r.Execute(tf, t, "ibtool", newRoot(tf, []cmdutil.Tool{t}), args[1:])
		}
	}
	root := NewRootCommand(f)
	if len(args) > 1 {
		name := args[1]
		if !isFlag(name) && !isBuiltin(root, name) {
			return unknownTool(f, name)
		}
		// cobra's help of an unknown topic prints the root's usage and
		// succeeds.
		if name == "help" && len(args) > 2 && !isFlag(args[2]) && !isBuiltin(root, args[2]) {
			if _, err := cmdutil.Lookup(args[2]); err != nil {
				return unknownTool(f, args[2])
			}
		}
	}
	return r.Execute(f, cmdutil.Tool{SignalIsEnd: true}, "ibtool", root, args[1:])
}

// unknownTool reports that name is no tool, as a usage error.
func unknownTool(f *cmdutil.Factory, name string) int {
	_, err := cmdutil.Lookup(name)
	cmdutil.RenderError(f.IO.ErrOut, "ibtool", err, 0)
	return cmdutil.ExitCode(err)
}

// isIbtoolName reports whether a program name is ibtool's own: "ibtool",
// or a copy of it named with a suffix after - . or _ ("ibtool-1.2",
// "ibtool.new", "ibtool_amd64"). Any other name is a symlink's, which
// must name a tool.
func isIbtoolName(prog string) bool {
	rest, ok := strings.CutPrefix(prog, "ibtool")
	return ok && (rest == "" || strings.ContainsRune("-._", rune(rest[0])))
}

// leanRoot reports whether args ask for what the root command prints
// without its tools or a run: the tool list (no argument; it comes from
// the registry) and the version. Help, completion, links and flag errors
// show or walk the tools, so they get the whole tree.
func leanRoot(f *cmdutil.Factory, args []string) bool {
	switch len(args) {
	case 0:
		return true
	case 1:
		// cobra has no version flag when there is no version.
		return (args[0] == "--version" || args[0] == "-v") && f.Version != ""
	}
	return false
}

// runLean prints the tool list or the version as the root command would,
// byte for byte and with its exit codes, without building a command or
// starting a run: cobra's Execute and the run's signal catching (a
// goroutine and a thread) cost page faults at every start, and "ibtool
// --version" is what scripts call to check for ibtool.
func runLean(f *cmdutil.Factory, args []string) int {
	var err error
	if len(args) == 0 {
		err = listTools(f)
	} else {
		// cobra's default version function, and what it does when the
		// write fails.
		if _, err = fmt.Fprintf(f.IO.Out, "ibtool version %s\n", f.Version); err != nil {
			fmt.Fprintln(f.IO.Out, err)
		}
	}
	if err == nil {
		return cmdutil.ExitOK
	}
	cmdutil.RenderError(f.IO.ErrOut, "ibtool", err, 0)
	return cmdutil.ExitCode(err)
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

// NewRootCommand returns "ibtool" with every tool and the built-in commands below it.
func NewRootCommand(f *cmdutil.Factory) *cobra.Command {
	root := newRoot(f, cmdutil.Tools())
	root.AddCommand(newLinksCmd(f), newCompletionCmd(f, root))
	return root
}

// newRoot returns "ibtool" with the tools given below it.
func newRoot(f *cmdutil.Factory, tools []cmdutil.Tool) *cobra.Command {
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
	root.SetFlagErrorFunc(cmdutil.FlagError)
	for _, t := range tools {
		root.AddCommand(cmdutil.ToolCommand(f, t))
	}
	return root
}
