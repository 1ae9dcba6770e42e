package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// echoTool is a tool registered only in tests: it prints its arguments and
// fails in the ways the tests ask for.
func init() {
	cmdutil.Register(cmdutil.Tool{Name: "zz-echo", Summary: "test tool", New: func(f *cmdutil.Factory) *cobra.Command {
		var o cmdutil.CommonOptions
		c := &cobra.Command{
			Use:  "zz-echo [fail|usage|findings|context] ARGS",
			Args: cmdutil.ArgsRange(0, 3),
			RunE: func(c *cobra.Command, args []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				if len(args) > 0 {
					switch args[0] {
					case "fail":
						return errors.New("it broke")
					case "usage":
						return cmdutil.UsageErrorf("bad thing %q", "x")
					case "findings":
						return &cmdutil.FindingsError{Summary: "2 errors found"}
					case "context":
						return cmdutil.WithContext(cmdutil.WithContext(errors.New("timeout"), "querying PortInfo"), "resolving path to 12")
					}
				}
				fmt.Fprintf(f.IO.Out, "args=%q verbose=%d\n", args, o.Verbose)
				return nil
			},
		}
		cmdutil.AddCommonFlags(c, f, &o, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON)
		return c
	}})
}

// zz-cobra-args checks its arguments with cobra's own validator, as a few
// tools do.
func init() {
	cmdutil.Register(cmdutil.Tool{Name: "zz-cobra-args", Summary: "test tool", New: func(f *cmdutil.Factory) *cobra.Command {
		return &cobra.Command{Use: "zz-cobra-args A B", Args: cobra.ExactArgs(2), RunE: func(*cobra.Command, []string) error { return nil }}
	}})
}

func TestMainDispatch(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"subcommand", []string{"ibtool", "zz-echo", "a", "b"}, 0, "args=[\"a\" \"b\"] verbose=0\n", ""},
		{"symlink", []string{"/usr/sbin/zz-echo", "a"}, 0, "args=[\"a\"] verbose=0\n", ""},
		{"symlink verbose and debug", []string{"zz-echo", "-vv", "-d"}, 0, "args=[] verbose=3\n", ""},
		{"unknown tool", []string{"ibtool", "nosuchtool"}, cmdutil.ExitUsage, "", "ibtool: unknown tool \"nosuchtool\"; run 'ibtool' for the list of tools\n"},
		{"symlink of an unknown tool", []string{"/usr/sbin/nosuchtool"}, cmdutil.ExitUsage, "", "ibtool: unknown tool \"nosuchtool\"; run 'ibtool' for the list of tools\n"},
		{"symlink of an unknown tool, a tool after it", []string{"nosuchtool", "zz-echo", "a"}, cmdutil.ExitUsage, "", "ibtool: unknown tool \"nosuchtool\"; run 'ibtool' for the list of tools\n"},
		{"symlink of a name ibtool starts", []string{"ibtoolx", "zz-echo"}, cmdutil.ExitUsage, "", "ibtool: unknown tool \"ibtoolx\"; run 'ibtool' for the list of tools\n"},
		{"help of an unknown tool", []string{"ibtool", "help", "nosuchtool"}, cmdutil.ExitUsage, "", "ibtool: unknown tool \"nosuchtool\"; run 'ibtool' for the list of tools\n"},
		{"versioned copy", []string{"/opt/bin/ibtool-1.2", "zz-echo", "a"}, 0, "args=[\"a\"] verbose=0\n", ""},
		{"copy with a dot", []string{"ibtool.new", "zz-echo"}, 0, "args=[] verbose=0\n", ""},
		{"runtime failure", []string{"ibtool", "zz-echo", "fail"}, cmdutil.ExitFailure, "", "zz-echo: it broke\n"},
		{"usage error", []string{"zz-echo", "usage"}, cmdutil.ExitUsage, "", "zz-echo: bad thing \"x\"\n"},
		{"findings", []string{"zz-echo", "findings"}, cmdutil.ExitFindings, "", "zz-echo: 2 errors found\n"},
		{"too many args", []string{"zz-echo", "1", "2", "3", "4"}, cmdutil.ExitUsage, "", "zz-echo: expected at most 3 argument(s), got 4: [\"4\"]\nRun 'zz-echo --help' for usage.\n"},
		{"bad flag", []string{"zz-echo", "--nosuch"}, cmdutil.ExitUsage, "", "zz-echo: unknown flag: --nosuch\nRun 'zz-echo --help' for usage.\n"},
		{"bad flag value", []string{"zz-echo", "-P", "256"}, cmdutil.ExitUsage, "", "zz-echo: invalid port number \"256\": out of range 0 to 255\n"},
		{"context short", []string{"zz-echo", "context"}, cmdutil.ExitFailure, "", "zz-echo: resolving path to 12: timeout\n"},
		{"context verbose", []string{"zz-echo", "-v", "context"}, cmdutil.ExitFailure, "", "zz-echo: timeout\n  while querying PortInfo\n  while resolving path to 12\n"},
		{"version", []string{"zz-echo", "-V"}, 0, "zz-echo (ibtool) test\n", ""},
		{"cobra's argument check", []string{"zz-cobra-args", "a"}, cmdutil.ExitUsage, "", "zz-cobra-args: accepts 2 arg(s), received 1\nRun 'zz-cobra-args --help' for usage.\n"},
		{"cobra's argument check passes", []string{"ibtool", "zz-cobra-args", "a", "b"}, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := cmdutil.NewTestFactory(nil)
			code := Main(tt.args, f)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.wantCode, errOut)
			}
			if diff := cmp.Diff(tt.wantOut, out.String()); diff != "" {
				t.Errorf("unexpected stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHelp checks that "ibtool help" of a tool or a built-in command prints
// its help and succeeds, as --help does.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "zz-echo"}, {"help", "links"}, {"help"}, {"help", "help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f, out, errOut := cmdutil.NewTestFactory(nil)
			if code := Main(append([]string{"ibtool"}, args...), f); code != 0 || errOut.Len() != 0 {
				t.Errorf("exit code %d, stderr %q; want 0 and nothing", code, errOut)
			}
			if !strings.Contains(out.String(), "Usage:") {
				t.Errorf("stdout %q: want the help", out)
			}
		})
	}
}

func TestListTools(t *testing.T) {
	f, out, _ := cmdutil.NewTestFactory(nil)
	if code := Main([]string{"ibtool"}, f); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	var want strings.Builder
	for _, tool := range cmdutil.Tools() {
		fmt.Fprintf(&want, "%s\t%s\n", tool.Name, tool.Summary)
	}
	if diff := cmp.Diff(want.String(), out.String()); diff != "" {
		t.Errorf("unexpected piped listing (-want +got):\n%s", diff)
	}

	f, out, _ = cmdutil.NewTestFactory(nil)
	f.IO.OutIsTTY = true
	if code := Main([]string{"ibtool"}, f); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if got, want := len(lines), len(cmdutil.Tools())+1; got != want {
		t.Fatalf("terminal listing has %d lines, want %d:\n%s", got, want, out)
	}
	col := strings.Index(lines[0], "SUMMARY")
	for _, l := range lines[1:] {
		if idx := strings.Index(l, "test tool"); strings.HasPrefix(l, "zz-echo") && idx != col {
			t.Errorf("summary column at %d, header at %d:\n%s", idx, col, out)
		}
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering a tool twice did not panic")
		}
	}()
	cmdutil.Register(cmdutil.Tool{Name: "zz-echo", New: func(*cmdutil.Factory) *cobra.Command { return nil }})
}

func TestLinks(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ibtool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := filepath.Join(dir, "links")
	if err := os.Mkdir(links, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func() (int, string) {
		f, _, errOut := cmdutil.NewTestFactory(nil)
		return Main([]string{"ibtool", "links", "--target", bin, links}, f), errOut.String()
	}
	if code, msg := run(); code != 0 {
		t.Fatalf("links: exit %d: %s", code, msg)
	}
	for _, tool := range cmdutil.Tools() {
		got, err := os.Readlink(filepath.Join(links, tool.Name))
		if err != nil || got != bin {
			t.Errorf("link %s -> %q (%v), want %q", tool.Name, got, err, bin)
		}
	}
	// Running again replaces ibtool's own links.
	if code, msg := run(); code != 0 {
		t.Fatalf("links again: exit %d: %s", code, msg)
	}
	// A regular file of a tool's name is never overwritten, and nothing is created.
	victim := filepath.Join(links, "zz-echo")
	os.Remove(victim)
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, msg := run()
	if code != cmdutil.ExitFailure || !strings.Contains(msg, "refusing to overwrite") || !strings.Contains(msg, victim) {
		t.Errorf("links over a regular file: exit %d, %q", code, msg)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("regular file was changed to %q", b)
	}
	f, _, errOut := cmdutil.NewTestFactory(nil)
	if code := Main([]string{"ibtool", "links", filepath.Join(dir, "nodir")}, f); code != cmdutil.ExitUsage {
		t.Errorf("links to a missing dir: exit %d, %q", code, errOut)
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		f, out, errOut := cmdutil.NewTestFactory(nil)
		if code := Main([]string{"ibtool", "completion", shell}, f); code != 0 {
			t.Fatalf("%s: exit %d: %s", shell, code, errOut)
		}
		if !strings.Contains(out.String(), "ibtool") || !strings.Contains(out.String(), "zz-echo") {
			t.Errorf("%s completion does not register the tool names:\n%.300s", shell, out)
		}
	}
	// The scripts ask the typed word for completions: through a symlink too.
	for _, argv := range [][]string{{"ibtool", "__complete", "zz-"}, {"ibtool", "__complete", "zz-echo", "--js"}, {"zz-echo", "__complete", "--js"}} {
		f, out, errOut := cmdutil.NewTestFactory(nil)
		if code := Main(argv, f); code != 0 {
			t.Fatalf("%q: exit %d: %s", argv, code, errOut)
		}
		want := "zz-echo"
		if strings.HasPrefix(argv[len(argv)-1], "--") {
			want = "--json"
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%q completes to %q, want %s among them", argv, out, want)
		}
	}
	f, _, _ := cmdutil.NewTestFactory(nil)
	if code := Main([]string{"ibtool", "completion", "tcsh"}, f); code != cmdutil.ExitUsage {
		t.Errorf("unknown shell: exit %d, want %d", code, cmdutil.ExitUsage)
	}
}

func mustTool(t *testing.T, name string) cmdutil.Tool {
	t.Helper()
	tool, err := cmdutil.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}
func TestDryRunFlag(t *testing.T) {
	for _, tool := range []string{"init_all_ports", "set_port_state", "ibportstate", "perfquery", "sminfo", "ibccconfig", "ibsendtrap", "ibclearcounters", "ibclearerrors", "set_nodedesc", "ibqueryerrors", "vendstat"} {
		f, _, _ := cmdutil.NewTestFactory(nil)
		c := cmdutil.ToolCommand(f, mustTool(t, tool))
		if c.Flags().Lookup("dry-run") == nil {
			t.Errorf("%s has no --dry-run", tool)
		}
	}
	for _, tool := range []string{"ibchecknet", "ibroute", "smpquery"} {
		f, _, _ := cmdutil.NewTestFactory(nil)
		if c := cmdutil.ToolCommand(f, mustTool(t, tool)); c.Flags().Lookup("dry-run") != nil {
			t.Errorf("%s, which sends no Set, has --dry-run", tool)
		}
	}
}

// failWriter fails every write, as a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestLeanRoot checks that the tool list and the version, which Main
// prints without building the root command or starting a run, are what
// the root command prints, on a terminal and piped and when the write
// fails.
func TestLeanRoot(t *testing.T) {
	for _, args := range [][]string{{}, {"--version"}, {"-v"}} {
		for _, tty := range []bool{false, true} {
			for _, fail := range []bool{false, true} {
				t.Run(fmt.Sprintf("%q tty=%v fail=%v", args, tty, fail), func(t *testing.T) {
					run := func(lean bool) (int, string, string) {
						f, out, errOut := cmdutil.NewTestFactory(nil)
						f.IO.OutIsTTY = tty
						if fail {
							f.IO.Out = failWriter{}
						}
						if !leanRoot(f, args) {
							t.Fatalf("%q: not a lean root", args)
						}
						if lean {
							return runLean(f, args), out.String(), errOut.String()
						}
						r := cmdutil.NewRun(f)
						defer r.Stop()
						return r.Execute(f, cmdutil.Tool{SignalIsEnd: true}, "ibtool", newRoot(f, nil), args), out.String(), errOut.String()
					}
					wantCode, wantOut, wantErr := run(false)
					code, out, errOut := run(true)
					if code != wantCode {
						t.Errorf("exit code %d, want %d", code, wantCode)
					}
					if diff := cmp.Diff(wantOut, out); diff != "" {
						t.Errorf("stdout (-want +got):\n%s", diff)
					}
					if diff := cmp.Diff(wantErr, errOut); diff != "" {
						t.Errorf("stderr (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
	f, _, _ := cmdutil.NewTestFactory(nil)
	f.Version = ""
	if leanRoot(f, []string{"--version"}) {
		t.Error("--version is lean without a version, where cobra has no such flag")
	}
}
