package cmd

import (
	"bytes"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func newCompletionCmd(f *cmdutil.Factory, root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "print a shell completion script",
		Long: "completion prints a script that completes ibtool's tools and flags, and the same\n" +
			"for every tool called through its symlink.\nbash: source <(ibtool completion bash)",
		Args:      cobra.MatchAll(cmdutil.ArgsRange(1, 1), onlyShells),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(c *cobra.Command, args []string) error {
			return writeCompletion(f.IO.Out, root, args[0])
		},
	}
}

// writeCompletion writes cobra's script for shell, then registers the same
// completion function for each tool name. Cobra's scripts ask the word the
// user typed for completions ("perfquery __complete ..."), and that runs the
// tool through its symlink, so the aliases need no script of their own.
func writeCompletion(w io.Writer, root *cobra.Command, shell string) error {
	var buf bytes.Buffer
	var err error
	switch shell {
	case "bash":
		err = root.GenBashCompletionV2(&buf, true)
	case "zsh":
		err = root.GenZshCompletion(&buf)
	default:
		err = root.GenFishCompletion(&buf, true)
	}
	if err != nil {
		return err
	}
	fishLine := regexp.MustCompile(`(?m)^complete (.*)-c ibtool (.*)$`)
	fishLines := fishLine.FindAll(buf.Bytes(), -1)
	for _, t := range cmdutil.Tools() {
		switch shell {
		case "bash":
			fmt.Fprintf(&buf, "complete -o default -F __start_ibtool %s\n", t.Name)
		case "zsh":
			fmt.Fprintf(&buf, "compdef _ibtool %s\n", t.Name)
		default:
			for _, l := range fishLines {
				buf.Write(fishLine.ReplaceAll(l, []byte("complete ${1}-c "+t.Name+" ${2}")))
				buf.WriteByte('\n')
			}
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func onlyShells(_ *cobra.Command, args []string) error {
	switch args[0] {
	case "bash", "zsh", "fish":
		return nil
	}
	return cmdutil.UsageErrorf("unknown shell %q: want bash, zsh or fish", args[0])
}
