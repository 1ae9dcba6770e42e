// Command optcheck lists every long and short option of the infiniband-diags
// 44 and ibverbs-utils programs, of ibutils' ibdmchk and of rdmacm-utils'
// programs that ibtool has (from their man
// pages and their --help and -h output) and of python-rdma's ibtool commands (python-rdma.txt, read
// from its source) and checks that ibtool's tool of the same name accepts
// each.
// It prints how many are missing and which, then fails if one is missing
// that the known-missing list does not name, or if the list names one
// that ibtool now accepts: the list only shrinks, and stays true.
//
//	go run ./scripts/optcheck                # check against scripts/optcheck/missing.txt
//	go run ./scripts/optcheck -update        # rewrite the list: drop what ibtool accepts, add what is new
//
// The list has one "tool option reason" per line; the reason says why the
// option is missing (an issue, a branch) and may not be empty.
//
// Exit codes: 0 ok, 1 the list and ibtool disagree, 2 usage, 3 failure.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd"
)

// Exit codes.
const (
	exitOK       = 0
	exitMismatch = 1
	exitUsage    = 2
	exitFailure  = 3
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("optcheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	list := fl.String("list", "scripts/optcheck/missing.txt", "the known-missing list")
	python := fl.String("python-rdma", "scripts/optcheck/python-rdma.txt", "python-rdma's options, \"tool option\" lines")
	update := fl.Bool("update", false, "rewrite the list to what is missing now (new lines get a reason to fill in)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "optcheck: unexpected argument %q\n", fl.Arg(0))
		return exitUsage
	}
	known, err := readKnown(*list)
	if err != nil {
		fmt.Fprintln(stderr, "optcheck:", err)
		return exitFailure
	}
	progs, err := reference(ctx, slices.Concat(diagsTools, verbsTools, ibutilsTools, rdmacmTools))
	if err != nil {
		fmt.Fprintln(stderr, "optcheck:", err)
		return exitFailure
	}
	py, err := readPythonRdma(*python, progs)
	if err != nil {
		fmt.Fprintln(stderr, "optcheck:", err)
		return exitFailure
	}
	progs = append(progs, py...)
	r, err := check(ctx, progs, ibtoolFlags(), known)
	if err != nil {
		fmt.Fprintln(stderr, "optcheck:", err)
		return exitFailure
	}
	r.write(stdout)
	if *update {
		if err := writeKnown(*list, r.missing, known); err != nil {
			fmt.Fprintln(stderr, "optcheck:", err)
			return exitFailure
		}
		return exitOK
	}
	if len(r.unlisted)+len(r.stale) > 0 {
		return exitMismatch
	}
	return exitOK
}

// flagSet answers whether a tool accepts an option.
type flagSet func(option string) bool

// ibtoolFlags returns, per tool name, whether ibtool's command for it
// accepts an option, hidden flags included (they are accepted). Tools
// ibtool lacks have no entry.
func ibtoolFlags() map[string]flagSet {
	m := map[string]flagSet{}
	for _, c := range cmd.ToolCommands(cmd.NewFactory("optcheck")) {
		c.InitDefaultHelpFlag()
		m[c.Name()] = accepts(c)
	}
	return m
}

func accepts(c *cobra.Command) flagSet {
	return func(opt string) bool {
		if name, ok := strings.CutPrefix(opt, "--"); ok {
			return c.Flags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil
		}
		s := strings.TrimPrefix(opt, "-")
		return c.Flags().ShorthandLookup(s) != nil || c.PersistentFlags().ShorthandLookup(s) != nil
	}
}

// missingOption is a reference option ibtool's tool does not accept.
type missingOption struct {
	Tool, Option, From string
}

func (m missingOption) key() string { return m.Tool + " " + m.Option }

// result is what check found.
type result struct {
	programs, options int
	missing           []missingOption
	manOnly           []missingOption // only the man page has it, and the program rejects it too
	unlisted          []missingOption // missing and not in the list
	stale             []string        // in the list, but ibtool accepts it (or the reference has no such option)
	known             map[string]string
}

// check compares the reference options with ibtool's flags and the list.
// An option only a man page names, which the program itself rejects, is
// not missing: ibtool rejecting it too is parity.
func check(ctx context.Context, progs []Program, ibtool map[string]flagSet, known map[string]string) (result, error) {
	r := result{programs: len(progs), known: known}
	missing := map[string]bool{}
	for _, p := range progs {
		has := ibtool[p.Name]
		for _, o := range p.Options {
			r.options++
			if has != nil && has(o.Name) {
				continue
			}
			m := missingOption{Tool: p.Name, Option: o.Name, From: o.From}
			if o.From == "man" {
				rejected, err := rejectedByTool(ctx, p.Name, o.Name)
				if err != nil {
					return r, err
				}
				if rejected {
					r.manOnly = append(r.manOnly, m)
					continue
				}
			}
			r.missing = append(r.missing, m)
			missing[m.key()] = true
			if _, ok := known[m.key()]; !ok {
				r.unlisted = append(r.unlisted, m)
			}
		}
	}
	for k := range known {
		if !missing[k] {
			r.stale = append(r.stale, k)
		}
	}
	sort.Strings(r.stale)
	return r, nil
}

func (r result) write(w io.Writer) {
	fmt.Fprintf(w, "%d options missing (of %d options of %d programs)\n", len(r.missing), r.options, r.programs)
	for _, m := range r.missing {
		reason := r.known[m.key()]
		if reason == "" {
			reason = "NOT IN THE LIST"
		}
		fmt.Fprintf(w, "  %-20s %-22s %-9s %s\n", m.Tool, m.Option, m.From, reason)
	}
	if len(r.manOnly) > 0 {
		fmt.Fprintf(w, "not counted: %d options only a man page names, which the program rejects too\n", len(r.manOnly))
		for _, m := range r.manOnly {
			fmt.Fprintf(w, "  %-20s %s\n", m.Tool, m.Option)
		}
	}
	if len(r.unlisted) > 0 {
		fmt.Fprintf(w, "%d missing options are not in the known-missing list: add the option to ibtool (or, with a reason, to the list):\n", len(r.unlisted))
		for _, m := range r.unlisted {
			fmt.Fprintf(w, "  %s\n", m.key())
		}
	}
	if len(r.stale) > 0 {
		fmt.Fprintf(w, "%d lines of the known-missing list name options ibtool accepts now (or no program has): remove them:\n", len(r.stale))
		for _, k := range r.stale {
			fmt.Fprintf(w, "  %s\n", k)
		}
	}
}

// readKnown reads the known-missing list: "tool option reason" lines,
// blank lines and # comments.
func readKnown(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	known := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[1], "-") {
			return nil, fmt.Errorf("%s:%d: want \"tool option reason\", got %q", path, i+1, line)
		}
		k := f[0] + " " + f[1]
		if _, dup := known[k]; dup {
			return nil, fmt.Errorf("%s:%d: %s listed twice", path, i+1, k)
		}
		known[k] = strings.Join(f[2:], " ")
	}
	return known, nil
}

// listHeader opens the known-missing list.
const listHeader = `# Options of infiniband-diags 44, ibverbs-utils and python-rdma that ibtool's
# tool of the same name does not accept yet: "tool option reason", one a line.
# scripts/optcheck (run by make test) fails on a missing option not listed
# here and on a line here for an option ibtool accepts, so this list only
# shrinks. go run ./scripts/optcheck -update rewrites it.
`

// writeKnown writes the list of what is missing now, keeping the reasons
// already given; new lines say they need one.
func writeKnown(path string, missing []missingOption, known map[string]string) error {
	var b strings.Builder
	b.WriteString(listHeader)
	for _, m := range missing {
		reason := known[m.key()]
		if reason == "" {
			reason = "TODO: say why"
		}
		fmt.Fprintf(&b, "%s %s %s\n", m.Tool, m.Option, reason)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
