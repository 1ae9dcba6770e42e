package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// diagsTools are the 30 programs of infiniband-diags 44 (Debian bookworm's
// /usr/sbin), scripts included.
var diagsTools = []string{
	"check_lft_balance", "dump_fts", "dump_lfts", "dump_mfts", "ibaddr",
	"ibcacheedit", "ibccconfig", "ibccquery", "ibfindnodesusing", "ibhosts",
	"ibidsverify", "iblinkinfo", "ibnetdiscover", "ibnodes", "ibping",
	"ibportstate", "ibqueryerrors", "ibroute", "ibrouters", "ibstat",
	"ibstatus", "ibswitches", "ibsysstat", "ibtracert", "perfquery",
	"saquery", "sminfo", "smpdump", "smpquery", "vendstat",
}

// verbsTools are the programs of ibverbs-utils 44.
var verbsTools = []string{
	"ibv_asyncwatch", "ibv_devices", "ibv_devinfo", "ibv_rc_pingpong",
	"ibv_srq_pingpong", "ibv_uc_pingpong", "ibv_ud_pingpong", "ibv_xsrq_pingpong",
}

// ibutilsTools are the programs of ibutils (Debian bookworm's ibutils
// 1.5.7) that ibtool has.
var ibutilsTools = []string{"ibdmchk"}

// rdmacmTools are the programs of rdmacm-utils 44 that ibtool has.
var rdmacmTools = []string{"cmtime", "mckey", "rdma_client", "rdma_server", "rdma_xclient", "rdma_xserver", "rping", "ucmatose", "udaddy"}

// Program is one reference program and the options its documentation
// names.
type Program struct {
	Name    string
	Man     string // the man page read ("" if none)
	Options []Option
}

// Option is one spelling of an option: "-x" or "--extended". A short
// and a long spelling of the same option are two Options, because
// either may be the one a script uses.
type Option struct {
	Name string
	From string // where it was seen: "man", "help" or "man,help"; "python-rdma"
}

// rejectedByTool reports whether the program itself rejects opt, which
// only its man page names (a man page's mistake, such as saquery's
// --outstanding_smps or check_lft_balance's -R). The option is given
// with an argument and --help after it, so a program that does accept
// it prints its usage instead of running.
func rejectedByTool(ctx context.Context, name, opt string) (bool, error) {
	bin, err := lookTool(name)
	if err != nil {
		return false, err
	}
	out, err := runTool(ctx, bin, opt, "optcheck", "--help")
	if err != nil {
		return false, err
	}
	bare := strings.TrimLeft(opt, "-")
	for _, line := range strings.Split(out, "\n") {
		l := strings.ToLower(line)
		if (strings.Contains(l, "unrecognized option") || strings.Contains(l, "invalid option") ||
			strings.Contains(l, "unknown option")) && strings.Contains(line, bare) {
			return true, nil
		}
	}
	return false, nil
}

// reference reads the man page and the --help and -h output of each tool.
func reference(ctx context.Context, tools []string) ([]Program, error) {
	var ps []Program
	for _, name := range tools {
		p, err := readProgram(ctx, name)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func readProgram(ctx context.Context, name string) (Program, error) {
	p := Program{Name: name}
	seen := map[string]map[string]bool{}
	add := func(from string, opts []string) {
		for _, o := range opts {
			if seen[o] == nil {
				seen[o] = map[string]bool{}
			}
			seen[o][from] = true
		}
	}
	man, text, err := readMan(name)
	if err != nil {
		return p, err
	}
	p.Man = man
	add("man", manOptions(text))
	bin, err := lookTool(name)
	if err != nil {
		return p, err
	}
	for _, arg := range []string{"--help", "-h"} {
		out, err := runTool(ctx, bin, arg)
		if err != nil {
			return p, err
		}
		add("help", helpOptions(out))
	}
	for o, from := range seen {
		var fs []string
		for f := range from {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		p.Options = append(p.Options, Option{Name: o, From: strings.Join(fs, ",")})
	}
	sort.Slice(p.Options, func(i, j int) bool { return optionLess(p.Options[i].Name, p.Options[j].Name) })
	return p, nil
}

// readPythonRdma reads the python-rdma options file: "tool option" lines,
// blank lines and # comments. An option the same tool's program in progs
// already names is left out, so that it counts once.
func readPythonRdma(path string, progs []Program) ([]Program, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	named := map[string]bool{}
	for _, p := range progs {
		for _, o := range p.Options {
			named[p.Name+" "+o.Name] = true
		}
	}
	var out []Program
	index := map[string]int{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[1], "-") {
			return nil, fmt.Errorf("%s:%d: want \"tool option\", got %q", path, i+1, line)
		}
		if named[line] {
			continue
		}
		named[line] = true
		j, ok := index[f[0]]
		if !ok {
			j = len(out)
			index[f[0]] = j
			out = append(out, Program{Name: f[0]})
		}
		out[j].Options = append(out[j].Options, Option{Name: f[1], From: "python-rdma"})
	}
	return out, nil
}

// optionLess orders short options before long ones, then by name.
func optionLess(a, b string) bool {
	la, lb := strings.HasPrefix(a, "--"), strings.HasPrefix(b, "--")
	if la != lb {
		return lb
	}
	return a < b
}

// manDirs are where the reference man pages are.
var manDirs = []string{"/usr/share/man/man8", "/usr/share/man/man1"}

// readMan returns the path and roff source of name's man page.
func readMan(name string) (string, string, error) {
	for _, dir := range manDirs {
		for _, sec := range []string{"8", "1"} {
			path := filepath.Join(dir, name+"."+sec+".gz")
			f, err := os.Open(path)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return "", "", err
			}
			defer f.Close()
			z, err := gzip.NewReader(f)
			if err != nil {
				return "", "", fmt.Errorf("%s: %w", path, err)
			}
			b, err := io.ReadAll(z)
			if err != nil {
				return "", "", fmt.Errorf("%s: %w", path, err)
			}
			return path, string(b), nil
		}
	}
	return "", "", fmt.Errorf("no man page for %s in %s", name, strings.Join(manDirs, " or "))
}

// lookTool finds name on $PATH or in the sbin and bin directories, which a
// user's PATH may lack.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (scripts/install-deps.sh installs it)", name)
}

// runTool runs bin with a help argument and returns what it printed on
// either stream. The tools print their usage before they look for a
// device, so no fabric is needed; the exit code is not checked, because
// several tools exit non-zero after their usage.
func runTool(ctx context.Context, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Dir = os.TempDir()
	c.Env = append(os.Environ(), "LD_PRELOAD=", "IBSIM_SOCKNAME=")
	out, err := c.CombinedOutput()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s %s: did not finish in time", bin, strings.Join(args, " "))
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return "", fmt.Errorf("%s %s: %w", bin, strings.Join(args, " "), err)
	}
	return string(out), nil
}

var roffEscapes = strings.NewReplacer(
	`\-`, "-", `\fB`, "", `\fI`, "", `\fR`, "", `\fP`, "", `\(aq`, "'", `\e`, `\`, `\ `, " ",
)

// manOptions returns the options a man page defines: the options that
// begin a line of its text (a .TP tag, a .B line, or a paragraph of the
// common options), and the short options of bracketed SYNOPSIS lines.
func manOptions(roff string) []string {
	var opts []string
	for _, line := range strings.Split(roff, "\n") {
		if strings.HasPrefix(line, `.\"`) {
			continue
		}
		line = roffEscapes.Replace(line)
		for _, macro := range []string{".B ", ".BI ", ".BR ", ".IP "} {
			line = strings.TrimPrefix(line, macro)
		}
		// Pod::Man quotes its item tags: .IP "\-t|\-\-topo <topo file>" 4
		line = strings.TrimPrefix(line, `"`)
		opts = append(opts, leadingOptions(line)...)
		if strings.HasPrefix(line, "[-") {
			opts = append(opts, usageOptions(line)...)
		}
	}
	return opts
}

var (
	getoptStd = regexp.MustCompile(`^\s*(?:With arguments|Boolean \(without arguments\)):(.*)$`)
	usageLine = regexp.MustCompile(`(?i)\busage:`)
)

// helpOptions returns the options a tool's usage text lists: a line that
// begins with options (getopt_long tables: "--extended, -x  show ...",
// "-p, --port=<port>  ..."), Perl Getopt::Std's lists ("With arguments:
// -l -i"), and the options of its "Usage:" lines ("[-Rh]", "-y mkey").
func helpOptions(text string) []string {
	var opts []string
	for _, line := range strings.Split(text, "\n") {
		if m := getoptStd.FindStringSubmatch(line); m != nil {
			opts = append(opts, usageOptions(m[1])...)
			continue
		}
		if usageLine.MatchString(line) {
			// Getopt::Std's own usage line shows placeholders.
			if !strings.Contains(line, "-OPTIONS") {
				opts = append(opts, usageOptions(line)...)
			}
			continue
		}
		opts = append(opts, leadingOptions(line)...)
	}
	return opts
}

var (
	longOpt  = regexp.MustCompile(`^--([A-Za-z0-9][A-Za-z0-9_-]*)`)
	shortOpt = regexp.MustCompile(`^-([A-Za-z])(?:$|[\s,|=:<\[])`)
)

// leadingOptions returns the options at the start of line, each one
// spelling of the option being described: "--extended, -x", "-p, --port=",
// "-h:", "-S <port_guid>", ibutils' "-t|--topo <topo file>". An empty long name ("--, -S") is skipped, and
// so is anything else a line may start with ("-1 if scan fails").
func leadingOptions(line string) []string {
	var opts []string
	s := strings.TrimLeft(line, " \t")
	for strings.HasPrefix(s, "-") {
		switch {
		case longOpt.MatchString(s):
			m := longOpt.FindStringSubmatch(s)
			opts = append(opts, "--"+strings.TrimRight(m[1], "-_"))
			s = s[len(m[0]):]
		case shortOpt.MatchString(s):
			opts = append(opts, s[:2])
			s = s[2:]
		case strings.HasPrefix(s, "--"):
			s = s[2:]
		default:
			return opts
		}
		// An argument placeholder and a comma may follow: "-o <val>,".
		s = strings.TrimLeft(s, "=")
		s = skipPlaceholder(s)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ",") && !strings.HasPrefix(s, "|") {
			return opts
		}
		s = strings.TrimLeft(s[1:], " \t")
	}
	return opts
}

// skipPlaceholder drops an argument placeholder: "<val>" or "<val>" after a
// space, or a word joined by "=".
func skipPlaceholder(s string) string {
	t := strings.TrimLeft(s, " \t")
	if strings.HasPrefix(t, "<") {
		if i := strings.Index(t, ">"); i >= 0 {
			return t[i+1:]
		}
	}
	return s
}

var usageToken = regexp.MustCompile(`(?:^|[\s\[|])-([A-Za-z]+)(?:$|[\s\]|])`)

// usageOptions returns the short options of a usage line: "-y mkey",
// "[-e]", and getopt clusters ("[-Rh]": -R and -h).
func usageOptions(line string) []string {
	var opts []string
	// The pattern's delimiters overlap between neighbours ("-e -v"), so
	// match each word on its own.
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '|' }) {
		m := usageToken.FindStringSubmatch(w)
		if m == nil {
			continue
		}
		for _, c := range m[1] {
			opts = append(opts, "-"+string(c))
		}
	}
	return opts
}
