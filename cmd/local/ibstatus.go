package local

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibstatus",
		Light:   true,
		Summary: "show the status of local InfiniBand ports (the ibstatus script's layout)",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbstatusCmd(f, nil) },
	})
}

// ibstatusOptions are ibstatus' parsed arguments and what it reads.
type ibstatusOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Sysfs opens the device tree.
	Sysfs func() (*rdma.FS, error)
	// Targets are the devname[:portnum] arguments; none means every port
	// of every device.
	Targets []string
}

func newIbstatusCmd(f *cmdutil.Factory, runF func(*ibstatusOptions) error) *cobra.Command {
	o := &ibstatusOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibstatus [devname[:portnum]]...",
		Short: "show the status of local InfiniBand ports (the ibstatus script's layout)",
		Long: `ibstatus prints, for every port of the named devices (every device when
none is named), the default GID, base and SM LIDs, state, physical state,
rate and link layer as sysfs writes them, exactly as infiniband-diags'
ibstatus script does. A value sysfs lacks prints as "unknown" (the link
layer as "IB"); unlike the script, ibstatus then says on stderr which file
it could not read and exits with status 3 (2 for a port named that does
not exist).`,
		Example: `  ibstatus mlx5_1        # every port of 'mlx5_1'
  ibstatus mlx5_0:2      # port 2 of 'mlx5_0'
  ibstatus               # every port of every device`,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			o.Targets = args
			o.Sysfs = func() (*rdma.FS, error) { return cmdutil.OpenLocalSysfs(f, &o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibstatusRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsJSON)
	return c
}

// ibstatusPort names one port to show: device and port as the script
// passes them on, which need not exist.
type ibstatusPort struct{ dev, port string }

// ibstatusRun follows the ibstatus script: which ports, in which order,
// and where it gives up. What it could not read is told after the output.
func ibstatusRun(o *ibstatusOptions) error {
	fsys, err := o.Sysfs()
	if err != nil {
		return err
	}
	pr := &ibstatusProblems{fsys: fsys, named: len(o.Targets) > 0 && o.Targets[0] != ""}
	return pr.Result(ibstatusShow(o, fsys, pr))
}

// ibstatusShow is ibstatusRun once the tree is open, before the problems
// are told.
func ibstatusShow(o *ibstatusOptions, fsys *rdma.FS, pr *ibstatusProblems) error {
	var out []ibstatusPort
	emit := func(ports []ibstatusPort) error {
		if o.Common.JSON {
			out = append(out, ports...)
			return nil
		}
		var b bytes.Buffer
		for _, p := range ports {
			writeIbstatusPort(&b, fsys, p, pr)
		}
		_, err := o.IO.Out.Write(b.Bytes())
		return err
	}
	if len(o.Targets) == 0 || o.Targets[0] == "" {
		// cd /sys/class/infiniband || fatal No devices; for dev in *
		devs, err := shellGlob(fsys, "class/infiniband")
		if err != nil {
			return cmdutil.WithContext(err, "No devices")
		}
		for _, dev := range devs {
			// ib_status $dev "+": the name is split into words too.
			words := shellArgs(2, append(shellFields(dev), "+")...)
			ports, err := ibstatusPorts(fsys, words[0], words[1])
			if err == nil {
				ports = ibstatusRecurGlob(ports, devs)
			}
			if err == nil {
				err = emit(ports)
			}
			if err != nil {
				return err
			}
		}
	} else {
		// while [ "$1" ]: an empty argument ends the list.
		for _, arg := range o.Targets {
			if arg == "" {
				break
			}
			dev, port := ibstatusSplitArg(arg)
			ports, err := ibstatusPorts(fsys, dev, port)
			if err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			if err := emit(ports); err != nil {
				return err
			}
		}
	}
	if o.Common.JSON {
		return writeIbstatusJSON(o, fsys, out, pr)
	}
	return nil
}

// ibstatusPorts is the script's ib_status: the ports of dev to show, every
// one ("+") or the words of port.
func ibstatusPorts(fsys *rdma.FS, dev, port string) ([]ibstatusPort, error) {
	portsDir := "class/infiniband/" + dev + "/ports"
	if !fsys.IsDir(portsDir) {
		return nil, fmt.Errorf("device '%s': sys files not found (%s)", dev, fsys.Path(portsDir))
	}
	// ports=`cd ...; echo *` or ports=$2, then for i in $ports.
	if port == "+" {
		glob, err := shellGlob(fsys, portsDir)
		if err != nil {
			return nil, err
		}
		port = strings.ReplaceAll(dashEcho(glob), "\x00", "")
	}
	names := shellFields(port)
	ports := make([]ibstatusPort, len(names))
	for i, n := range names {
		ports[i] = ibstatusPort{dev: dev, port: n}
	}
	return ports, nil
}

// ibstatusRecurGlob expands a port named "*" (the glob of an empty ports
// directory) as the script's unquoted `for i in $ports` does when it runs
// in class/infiniband, with no arguments: into the device names.
func ibstatusRecurGlob(ports []ibstatusPort, devs []string) []ibstatusPort {
	var out []ibstatusPort
	for _, p := range ports {
		if p.port != "*" {
			out = append(out, p)
			continue
		}
		for _, d := range devs {
			// port_status $1 $i: the name is split into words again.
			out = append(out, ibstatusPort{dev: p.dev, port: shellArgs(1, shellFields(d)...)[0]})
		}
	}
	return out
}

// ibstatusSplitArg splits devname[:portnum] as the script does with echo
// and sed, then word-splits the two for ib_status' $1 and $2. No port
// ("mlx5_0") gives port "+", every port.
func ibstatusSplitArg(arg string) (dev, port string) {
	echoed := dashEcho(shellFields(arg))
	dev = sedLines(echoed, func(l string) string {
		if i := strings.IndexByte(l, ':'); i >= 0 {
			return l[:i]
		}
		return l
	})
	port = sedLines(echoed, func(l string) string {
		if i := strings.LastIndexByte(l, ':'); i >= 0 {
			return l[i+1:]
		}
		return l
	})
	if port == dev {
		port = "+"
	}
	words := shellArgs(2, append(shellFields(dev), shellFields(port)...)...)
	return words[0], words[1]
}

// shellArgs returns the first n of words as a function's $1..$n see them:
// "" for those not passed.
func shellArgs(n int, words ...string) []string {
	args := make([]string, n)
	copy(args, words)
	return args
}

// ibstatusFields are the script's port_status lines after the header: a
// label, the file under the port directory, and what prints without it.
// The kernel writes every one of them for every port except link_layer,
// which kernels before 2.6.37 lack (hence the script's "IB").
var ibstatusFields = []struct {
	label, file, missing string
	optional             bool
}{
	{"\tdefault gid:\t", "gids/0", "unknown", false},
	{"\tbase lid:\t", "lid", "unknown", false},
	{"\tsm lid:\t\t", "sm_lid", "unknown", false},
	{"\tstate:\t\t", "state", "unknown", false},
	{"\tphys state:\t", "phys_state", "unknown", false},
	{"\trate:\t\t", "rate", "unknown", false},
	{"\tlink_layer:\t", "link_layer", "IB", true},
}

// writeIbstatusPort writes the script's port_status for one port.
func writeIbstatusPort(b *bytes.Buffer, fsys *rdma.FS, p ibstatusPort, pr *ibstatusProblems) {
	exists := pr.checkPort(p)
	b.WriteString(dashEcho([]string{"Infiniband device '" + p.dev + "' port " + p.port + " status:"}))
	for _, fl := range ibstatusFields {
		data, err := ibstatusRead(fsys, p, fl.file)
		if err != nil {
			if exists {
				pr.unread(err, fl.optional)
			}
			b.WriteString(dashEcho([]string{fl.label, fl.missing}))
			continue
		}
		b.WriteString(dashEcho(append([]string{fl.label}, shellFields(string(bytes.ReplaceAll(data, []byte{0}, nil)))...)))
	}
	b.WriteString("\n")
}

// ibstatusRead is the script's `[ -r F ] && cat F`: the contents of file
// under the port's directory.
func ibstatusRead(fsys *rdma.FS, p ibstatusPort, file string) ([]byte, error) {
	return fsys.ReadFile(ibstatusPortDir(p) + "/" + file)
}

func ibstatusPortDir(p ibstatusPort) string {
	return "class/infiniband/" + p.dev + "/ports/" + p.port
}

// ibstatusProblems collects what ibstatus could not read, told after the
// output, where the script shows "unknown" and says nothing.
type ibstatusProblems struct {
	cmdutil.SysfsProblems
	fsys *rdma.FS
	// named is set when the ports come from the command line: a port
	// named that does not exist is then a usage error.
	named bool
	// told holds the devices already found to have no ports, which the
	// script shows as a port named "*" or one per device name.
	told map[string]bool
}

// unread records a file that did not read. A missing optional file is
// not a problem: it prints its default as on an older kernel.
func (pr *ibstatusProblems) unread(err error, optional bool) {
	if optional && rdma.Absent(err) {
		return
	}
	pr.Add(err)
}

// checkPort reports whether p's directory is there. When it is not, the
// problem is the port, not each of its files: a device without ports, or
// a port named that the device does not have.
func (pr *ibstatusProblems) checkPort(p ibstatusPort) bool {
	dir := ibstatusPortDir(p)
	if _, err := pr.fsys.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return true
	}
	portsDir := "class/infiniband/" + p.dev + "/ports"
	if glob, err := shellGlob(pr.fsys, portsDir); err == nil && len(glob) == 1 && glob[0] == "*" {
		// The glob found nothing: the script's "*" stands for no ports.
		if !pr.told[p.dev] {
			if pr.told == nil {
				pr.told = map[string]bool{}
			}
			pr.told[p.dev] = true
			pr.Add(fmt.Errorf("device '%s' has no ports (%s is empty)", p.dev, pr.fsys.Path(portsDir)))
		}
		return false
	}
	err := fmt.Errorf("device '%s' port %s: sys files not found (%s)", p.dev, p.port, pr.fsys.Path(dir))
	if pr.named {
		err = &cmdutil.UsageError{Err: err}
	}
	pr.Add(err)
	return false
}

// shellGlob is `cd DIR && echo *`: the names in dir that do not start with
// a dot, in byte order (the glob order of dash, the /bin/sh of Debian, in
// the C and C.UTF-8 locales), or "*" itself when none match.
func shellGlob(fsys *rdma.FS, dir string) ([]string, error) {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		names = []string{"*"}
	}
	return names, nil
}

// shellFields splits s into words at the default IFS (space, tab,
// newline), as an unquoted expansion is split. Pathname expansion of the
// words is not done.
func shellFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

// sedLines applies edit to every line of the output of echo and returns
// what $(...) keeps of sed's output: trailing newlines dropped.
func sedLines(s string, edit func(string) string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = edit(l)
	}
	return strings.TrimRight(strings.ReplaceAll(strings.Join(lines, "\n"), "\x00", ""), "\n")
}

// dashEcho is what dash's builtin echo writes for args: the arguments
// joined by spaces and a newline, with the backslash escapes of printf %b
// (\c ends the output there, without the newline). A first argument -n
// drops the newline.
func dashEcho(args []string) string {
	nl := true
	if len(args) > 0 && args[0] == "-n" {
		args, nl = args[1:], false
	}
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if stop := echoEscapes(&b, a); stop {
			return b.String()
		}
	}
	if nl {
		b.WriteByte('\n')
	}
	return b.String()
}

// echoEscapes writes s with its backslash escapes interpreted and reports
// whether a \c stopped the output.
func echoEscapes(b *strings.Builder, s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'c':
			return true
		case '\\':
			b.WriteByte('\\')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		default:
			if c < '0' || c > '7' {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			// \0NNN and \NNN: up to three octal digits (after the 0).
			start := i
			if c == '0' {
				start++
			}
			v, j := 0, start
			for j < len(s) && j < start+3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			b.WriteByte(byte(v))
			i = j - 1
		}
	}
	return false
}

// ibstatusJSONPort is one port in ibstatus --json: the same files, parsed;
// null where the text output says "unknown".
type ibstatusJSONPort struct {
	Device        string    `json:"device"`
	Port          int       `json:"port"`
	DefaultGID    *rdma.GID `json:"defaultGid"`
	BaseLID       *uint64   `json:"baseLid"`
	SMLID         *uint64   `json:"smLid"`
	State         *uint64   `json:"state"`
	StateName     *string   `json:"stateName"`
	PhysState     *uint64   `json:"physState"`
	PhysStateName *string   `json:"physStateName"`
	Rate          *string   `json:"rate"`
	LinkLayer     string    `json:"linkLayer"`
}

// writeIbstatusJSON prints the ports as one JSON document. Ports whose
// name is not a number (the script's "*" for an empty ports directory, or
// a port that is not one) are a usage error when named and left out
// otherwise.
func writeIbstatusJSON(o *ibstatusOptions, fsys *rdma.FS, ports []ibstatusPort, pr *ibstatusProblems) error {
	doc := struct {
		Ports []ibstatusJSONPort `json:"ports"`
	}{Ports: []ibstatusJSONPort{}}
	for _, p := range ports {
		n, err := strconv.Atoi(p.port)
		if err != nil || n < 0 {
			if len(o.Targets) > 0 && p.port != "*" {
				return cmdutil.UsageErrorf("invalid port number %q of device '%s'", p.port, p.dev)
			}
			pr.checkPort(p)
			continue
		}
		doc.Ports = append(doc.Ports, ibstatusJSON(fsys, p, n, pr))
	}
	return cmdutil.WriteJSONDocument(o.IO.Out, doc)
}

// ibstatusJSON reads one port for --json: the files of the text output,
// parsed. A file that does not read or parse is null, and a problem.
func ibstatusJSON(fsys *rdma.FS, p ibstatusPort, n int, pr *ibstatusProblems) ibstatusJSONPort {
	jp := ibstatusJSONPort{Device: p.dev, Port: n, LinkLayer: "IB"}
	exists := pr.checkPort(p)
	problem := func(err error, optional bool) {
		if exists {
			pr.unread(err, optional)
		}
	}
	text := func(file string, optional bool) *string {
		data, err := ibstatusRead(fsys, p, file)
		if err != nil {
			problem(err, optional)
			return nil
		}
		s := rdma.CString(data, 0)
		return &s
	}
	parsed := func(file string, err error) {
		problem(&rdma.SysError{Op: "parse", Path: fsys.Path(ibstatusPortDir(p) + "/" + file), Err: err}, false)
	}
	num := func(file string) (*uint64, *string) {
		s := text(file, false)
		if s == nil {
			return nil, nil
		}
		v, err := rdma.ParseSysfsUint(*s)
		if err != nil {
			parsed(file, err)
			return nil, s
		}
		return &v, s
	}
	name := func(s *string) *string {
		if s == nil {
			return nil
		}
		_, after, ok := strings.Cut(*s, ": ")
		if !ok {
			return nil
		}
		return &after
	}
	if s := text("gids/0", false); s != nil {
		if g, err := rdma.ParseSysfsGID(*s); err == nil {
			jp.DefaultGID = &g
		} else {
			parsed("gids/0", err)
		}
	}
	jp.BaseLID, _ = num("lid")
	jp.SMLID, _ = num("sm_lid")
	var st, ph *string
	jp.State, st = num("state")
	jp.PhysState, ph = num("phys_state")
	jp.StateName, jp.PhysStateName = name(st), name(ph)
	jp.Rate = text("rate", false)
	if s := text("link_layer", true); s != nil {
		jp.LinkLayer = *s
	}
	return jp
}
