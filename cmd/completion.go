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
// tool through its symlink, so the aliases need no script of their own. A
// tool name completes only while it resolves to this ibtool: where
// infiniband-diags' perfquery comes first in PATH, asking it for
// completions would run it ("ibnetdiscover __complete" writes a topology
// file named __complete), so its words are left to the shell.
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
	buf.WriteString(aliasGuard[shell])
	for _, t := range cmdutil.Tools() {
		switch shell {
		case "bash":
			fmt.Fprintf(&buf, "complete -o default -F __ibtool_alias %s\n", t.Name)
		case "zsh":
			fmt.Fprintf(&buf, "compdef _ibtool_alias %s\n", t.Name)
		default:
			for _, l := range fishLines {
				l = fishLine.ReplaceAll(l, []byte("complete ${1}-c "+t.Name+" ${2}"))
				l = bytes.Replace(l, []byte(" -n '"), []byte(" -n '__ibtool_alias "+t.Name+" && "), 1)
				buf.Write(l)
				buf.WriteByte('\n')
			}
		}
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// aliasGuard holds each shell's test that a tool name, as PATH resolves
// it, is the same file as ibtool (writeCompletion).
var aliasGuard = map[string]string{
	"bash": `
# A tool name completes through ibtool only while PATH resolves it to ibtool.
__ibtool_alias() {
    local tool ours
    tool=$(type -P "$1") && ours=$(type -P ibtool) || return 0
    [[ $(readlink -f "$tool") == "$(readlink -f "$ours")" ]] || return 0
    __start_ibtool "$@"
}
`,
	"zsh": `
# A tool name completes through ibtool only while PATH resolves it to ibtool.
_ibtool_alias() {
    [[ -n ${commands[$words[1]]} && ${commands[$words[1]]:A} == ${commands[ibtool]:A} ]] || return 1
    _ibtool "$@"
}
`,
	"fish": `
# A tool name completes through ibtool only while PATH resolves it to ibtool.
function __ibtool_alias
    set -l tool (command -s $argv[1]); or return 1
    set -l ours (command -s ibtool); or return 1
    test (realpath $tool) = (realpath $ours)
end
`,
}

func onlyShells(_ *cobra.Command, args []string) error {
	switch args[0] {
	case "bash", "zsh", "fish":
		return nil
	}
	return cmdutil.UsageErrorf("unknown shell %q: want bash, zsh or fish", args[0])
}
