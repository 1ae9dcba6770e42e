package cmdutil

import (
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/cobra"
)

// Tool is one entry of the busybox registry.
type Tool struct {
	// Name is what operators type and what a symlink to ibtool is called.
	Name string
	// Summary is the one-line description shown by "ibtool" with no argument.
	Summary string
	// New builds the tool's command. It is called once per invocation.
	New func(f *Factory) *cobra.Command
	// SignalIsEnd says SIGINT and SIGTERM end the tool normally (ibping's
	// statistics, a server's stop, a watch): what it prints after one is
	// kept, and it exits as it returns. Any other tool stops printing at
	// the signal and exits 130 or 143, as the C tools a signal kills.
	SignalIsEnd bool
}

// ErrUnknownTool is wrapped by the error returned for a name that is not a tool.
var ErrUnknownTool = errors.New("unknown tool")

// registry is sized for every tool at once: growing it tool by tool cost
// allocations in every family's init.
var registry = make(map[string]Tool, 128)

// Register adds t to the registry. Registering a name twice is a programming
// error and panics at init.
func Register(t Tool) {
	if t.Name == "" || t.New == nil {
		panic("cmd: register needs a name and a constructor")
	}
	if _, dup := registry[t.Name]; dup {
		panic(fmt.Sprintf("cmd: tool %q registered twice", t.Name))
	}
	registry[t.Name] = t
}

// Lookup returns the tool called name.
func Lookup(name string) (Tool, error) {
	t, ok := registry[name]
	if !ok {
		return Tool{}, fmt.Errorf("%w %q; run 'ibtool' for the list of tools", ErrUnknownTool, name)
	}
	return t, nil
}

// Tools returns every registered tool, sorted by name.
func Tools() []Tool {
	out := make([]Tool, 0, len(registry))
	for _, t := range registry {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
	c.SetFlagErrorFunc(FlagError)
	if check := c.Args; check != nil {
		c.Args = func(c *cobra.Command, args []string) error { return argsUsageError(check(c, args)) }
	}
	return c
}

// argsUsageError makes a failed check of the positional arguments a usage
// error, as ArgsRange's are: cobra's own checks (cobra.NoArgs,
// cobra.ExactArgs) return plain errors, which would exit 3.
func argsUsageError(err error) error {
	var u *UsageError
	if err == nil || errors.As(err, &u) {
		return err
	}
	return &UsageError{Err: err, Syntax: true}
}
