package cmdutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
	// the signal and dies of it once it has cleaned up (exit code 130 or
	// 143 from Execute), as the C tools a signal kills.
	SignalIsEnd bool
	// Light says the tool's work is a few MADs to one target, or reading
	// this machine's devices: it waits far more than it computes, so it
	// runs on the one scheduler processor ibtool starts with
	// (internal/oneproc). Any other tool gets the runtime's default
	// before it runs (SetProcs).
	Light bool
}

// ErrUnknownTool is wrapped by the error returned for a name that is not a tool.
var ErrUnknownTool = errors.New("unknown tool")

// maxTools bounds the registry. The registry is a fixed array, not a map
// nor a growing slice: every family's init registers its tools at every
// start of every tool, and into an array that costs no allocation (a map
// sized for every tool was 18 KB). Registering more panics at init.
const maxTools = 128

var (
	registry [maxTools]Tool
	numTools int
)

// Register adds t to the registry. Registering a name twice is a programming
// error and panics at init.
func Register(t Tool) {
	if t.Name == "" || t.New == nil {
		panic("cmd: register needs a name and a constructor")
	}
	for _, r := range registry[:numTools] {
		if r.Name == t.Name {
			panic(fmt.Sprintf("cmd: tool %q registered twice", t.Name))
		}
	}
	if numTools == maxTools {
		panic(fmt.Sprintf("cmd: tool %q is one more than maxTools (%d): raise it", t.Name, maxTools))
	}
	registry[numTools] = t
	numTools++
}

// Lookup returns the tool called name.
func Lookup(name string) (Tool, error) {
	if t, ok := Find(name); ok {
		return t, nil
	}
	return Tool{}, fmt.Errorf("%w %q; run 'ibtool' for the list of tools", ErrUnknownTool, name)
}

// Find returns the tool called name, if there is one: Lookup without
// the error, for "ibtool", which is looked up at every start.
func Find(name string) (Tool, bool) {
	for _, t := range registry[:numTools] {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Tools returns every registered tool, sorted by name.
func Tools() []Tool {
	out := slices.Clone(registry[:numTools])
	slices.SortFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
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
