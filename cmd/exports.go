package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// ExitFailure is the exit code of a tool that could not do its work.
const ExitFailure = cmdutil.ExitFailure

// NewFactory returns a Factory on the process's real streams and environment.
func NewFactory(version string) *cmdutil.Factory { return cmdutil.NewFactory(version) }

// ToolCommands returns every tool's command as its symlink runs it, sorted
// by name (the man pages are made from them).
func ToolCommands(f *cmdutil.Factory) []*cobra.Command {
	var cs []*cobra.Command
	for _, t := range cmdutil.Tools() {
		cs = append(cs, cmdutil.ToolCommand(f, t))
	}
	return cs
}
