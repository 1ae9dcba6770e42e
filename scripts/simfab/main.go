// Command simfab drives the bench by hand: it generates fat trees, starts
// and stops simulated fabrics (ibsim and opensm), sends ibsim console
// commands, and runs an infiniband-diags tool and ibtool side by side.
// Everything it does is internal/simfabric's; this is only its command line.
//
//	go run ./scripts/simfab fattree -levels 3 -hosts 1000 -radix 36 > net
//	eval "$(go run ./scripts/simfab start net)"   # sets IBSIM_SOCKNAME, SIMFAB_DIR
//	go run ./scripts/simfab console 'Unlink "H-0001"[1]'
//	go run ./scripts/simfab wait
//	go run ./scripts/simfab freeze -for 2s        # ibsim stopped (SIGSTOP) for 2 s
//	go run ./scripts/simfab diff --sim-host H-0002 -- ibstat
//	go run ./scripts/simfab run --sim-host H-0002 -- perfquery
//	go run ./scripts/simfab join ff12:601b:ffff::1 H-0001 H-0002   # prints the MLID
//	go run ./scripts/simfab stop
//	RMPPSHIM_GUARD=1 LD_PRELOAD="$(go run ./scripts/simfab preload)" SIM_HOST=H-0002 saquery
//
// Exit codes: 0 ok, 1 diff found a difference, 2 usage, 3 failure.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Exit codes.
const (
	exitOK      = 0
	exitDiffers = 1
	exitUsage   = 2
	exitFailure = 3
)

// envDir names the fabric directory for the commands that use a running
// fabric; start prints it.
const envDir = "SIMFAB_DIR"

// errUsage marks command-line errors.
var errUsage = errors.New("usage")

// command is one subcommand.
type command struct {
	name, args, help string
	run              func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error)
}

var commands = []command{
	{"fattree", "-levels 2|3 -hosts N -radix R [-host-ports N]", "print a fat tree net file", runFatTree},
	{"start", "[-sm NODE] [-routing ENGINE] [-opensm-arg ARG]... [-timeout D] [-keep] [-no-sm] NETFILE", "start a fabric that outlives this command; prints shell exports", runStart},
	{"stop", "[DIR]", "stop the fabric in DIR (default $" + envDir + ")", runStop},
	{"console", "[-dir DIR] COMMAND...", "send one command line to ibsim's console and print the reply", runConsole},
	{"wait", "[-dir DIR] [-timeout D]", "wait for the fabric to settle after link changes: opensm's sweep (made to sweep when it does not), every cabled port Active", runWait},
	{"freeze", "[-dir DIR] [-for D]", "stop ibsim (SIGSTOP) as a hung simulator; with -for, thaw it after D (and at once on SIGINT or SIGTERM)", runFreeze},
	{"thaw", "[-dir DIR]", "resume a frozen ibsim (SIGCONT)", runThaw},
	{"crash", "[-dir DIR]", "kill ibsim (SIGKILL) as a simulator that died, then opensm; only stop works afterwards", runCrash},
	{"run", "[-dir DIR] [-sim-host NODE] -- TOOL [ARGS...]", "run an infiniband-diags tool under the shim (and the RMPP layer)", runRef},
	{"diff", "[-dir DIR] [-sim-host NODE] [-ibtool BIN] -- TOOL [ARGS...]", "run TOOL and `ibtool TOOL` with the same arguments and diff their output", runDiff},
	{"join", "[-dir DIR] [-leave] MGID NODE...", "make port 1 of each NODE a full member of multicast group MGID (SA MCMemberRecord Set; Delete with -leave) and print its MLID", runJoin},
	{"preload", "", "print the LD_PRELOAD value for the infiniband-diags tools (the RMPP layer, then the shim); set RMPPSHIM_GUARD=1 with it, as run does, or the shim may crash on a stray packet", runPreload},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// dispatch runs the subcommand args[0] and maps its error to an exit code.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" || args[0] == "--help" {
		usage(stderr)
		return exitUsage
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		code, err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return exitUsage
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "simfab %s: %v\nusage: simfab %s %s\n", c.name, err, c.name, c.args)
			return exitUsage
		case err != nil:
			fmt.Fprintf(stderr, "simfab %s: %v\n", c.name, err)
			return exitFailure
		}
		return code
	}
	fmt.Fprintf(stderr, "simfab: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: simfab COMMAND [ARGS]")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n           %s\n", c.name, c.args, c.help)
	}
}

// flags returns a flag set for subcommand name whose errors go to stderr.
func flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("simfab "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

func runFatTree(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flags("fattree", stderr)
	var spec simfabric.FatTreeSpec
	fs.IntVar(&spec.Levels, "levels", 2, "2 (leaf/spine) or 3 (leaf/aggregation/core)")
	fs.IntVar(&spec.Hosts, "hosts", 0, "number of HCAs")
	fs.IntVar(&spec.Radix, "radix", 36, "ports per switch")
	fs.IntVar(&spec.HostPorts, "host-ports", 1, "ports per HCA (only port 1 is cabled)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	net, err := simfabric.FatTree(spec)
	if errors.Is(err, simfabric.ErrBadFatTreeSpec) {
		return 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err != nil {
		return 0, err
	}
	_, err = stdout.Write(net)
	return exitOK, err
}

func runStart(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flags("start", stderr)
	opts := simfabric.Options{Detach: true, Log: stderr}
	fs.StringVar(&opts.SMNode, "sm", "", "node opensm attaches to (default: the first node of the net file)")
	fs.StringVar(&opts.RoutingEngine, "routing", "", "opensm routing engine (-R), e.g. updn or ftree")
	fs.DurationVar(&opts.Timeout, "timeout", 0, "give up after this long (default: scaled to the fabric)")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the fabric directory when the fabric stops")
	fs.BoolVar(&opts.NoSM, "no-sm", false, "start ibsim alone, without opensm (no LIDs; DR discovery works)")
	fs.Func("opensm-arg", "an argument added to opensm's command line (repeat it), e.g. -opensm-arg=-D -opensm-arg=0x41", func(a string) error {
		opts.OpenSMArgs = append(opts.OpenSMArgs, a)
		return nil
	})
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() != 1 {
		return 0, fmt.Errorf("%w: want one net file", errUsage)
	}
	opts.NetFile = fs.Arg(0)
	f, err := simfabric.Start(ctx, opts)
	if err != nil {
		return 0, err
	}
	ibsim, opensm := f.PIDs()
	fmt.Fprintf(stdout, "export IBSIM_SOCKNAME=%s\nexport %s=%s\n", f.SockName(), envDir, f.Dir())
	fmt.Fprintf(stderr, "simfab: fabric up in %v; ibsim pid %d, opensm pid %d; state in %s\n",
		f.Timing(), ibsim, opensm, f.StateFile())
	return exitOK, nil
}

func runPreload(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flags("preload", stderr)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	preload, err := simfabric.Preload()
	if err != nil {
		return 0, err
	}
	fmt.Fprintln(stdout, preload)
	return exitOK, nil
}

// attach finds the fabric of dir, or of $SIMFAB_DIR when dir is "".
func attach(dir string) (*simfabric.Fabric, error) {
	if dir == "" {
		dir = os.Getenv(envDir)
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: no fabric directory: pass one or set %s (simfab start prints it)", errUsage, envDir)
	}
	return simfabric.Attach(dir)
}

func runStop(_ context.Context, args []string, _, stderr io.Writer) (int, error) {
	fs := flags("stop", stderr)
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 1 {
		return 0, fmt.Errorf("%w: want at most one directory", errUsage)
	}
	f, err := attach(fs.Arg(0))
	if err != nil {
		return 0, err
	}
	return exitOK, f.Stop()
}

func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flags("console", stderr)
	dir := fs.String("dir", "", "fabric directory (default $"+envDir+")")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() == 0 {
		return 0, fmt.Errorf("%w: no command", errUsage)
	}
	f, err := attach(*dir)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	reply, err := f.Console(ctx, strings.Join(fs.Args(), " "))
	fmt.Fprint(stdout, reply)
	return exitOK, err
}

func runJoin(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flags("join", stderr)
	dir := fs.String("dir", "", "fabric directory (default $"+envDir+")")
	leave := fs.Bool("leave", false, "leave the group instead")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() < 2 {
		return 0, fmt.Errorf("%w: want a multicast GID and at least one node", errUsage)
	}
	mgid, err := rdma.ParseGID(fs.Arg(0))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	f, err := attach(*dir)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, node := range fs.Args()[1:] {
		if *leave {
			if err := f.LeaveMulticast(ctx, node, mgid); err != nil {
				return 0, err
			}
			continue
		}
		mlid, err := f.JoinMulticast(ctx, node, mgid)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(stdout, "%s MLID 0x%x\n", node, mlid)
	}
	return exitOK, nil
}

func runWait(ctx context.Context, args []string, _, stderr io.Writer) (int, error) {
	fs := flags("wait", stderr)
	dir := fs.String("dir", "", "fabric directory (default $"+envDir+")")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	f, err := attach(*dir)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	// The link changes of other processes since the last wait are in the
	// fabric directory's sweep mark, which WaitActive reads.
	return exitOK, f.WaitActive(ctx)
}

func runFreeze(ctx context.Context, args []string, _, stderr io.Writer) (int, error) {
	fs := flags("freeze", stderr)
	dir := fs.String("dir", "", "fabric directory (default $"+envDir+")")
	d := fs.Duration("for", 0, "thaw after this long (default: stay frozen until simfab thaw)")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *d < 0 {
		return 0, fmt.Errorf("%w: -for %v: negative", errUsage, *d)
	}
	f, err := attach(*dir)
	if err != nil {
		return 0, err
	}
	if err := f.Freeze(); err != nil {
		return 0, err
	}
	if *d == 0 {
		return exitOK, nil
	}
	// Thaw however the wait ends: its time, or a signal.
	select {
	case <-time.After(*d):
	case <-ctx.Done():
	}
	return exitOK, f.Thaw()
}

func runThaw(_ context.Context, args []string, _, stderr io.Writer) (int, error) {
	return runOnFabric("thaw", args, stderr, (*simfabric.Fabric).Thaw)
}

func runCrash(_ context.Context, args []string, _, stderr io.Writer) (int, error) {
	return runOnFabric("crash", args, stderr, (*simfabric.Fabric).KillSimulator)
}

// runOnFabric runs a command that takes only -dir and does op to the
// fabric there.
func runOnFabric(name string, args []string, stderr io.Writer, op func(*simfabric.Fabric) error) (int, error) {
	fs := flags(name, stderr)
	dir := fs.String("dir", "", "fabric directory (default $"+envDir+")")
	if err := parse(fs, args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	f, err := attach(*dir)
	if err != nil {
		return 0, err
	}
	return exitOK, op(f)
}

// toolFlags are the flags of run and diff.
type toolFlags struct {
	dir, simHost, ibtool string
	timeout              time.Duration
}

func parseTool(name string, args []string, stderr io.Writer, withIbtool bool) (*toolFlags, []string, error) {
	fs := flags(name, stderr)
	var tf toolFlags
	fs.StringVar(&tf.dir, "dir", "", "fabric directory (default $"+envDir+")")
	fs.StringVar(&tf.simHost, "sim-host", "", "node to attach at (default: ibsim's default port)")
	fs.DurationVar(&tf.timeout, "timeout", 5*time.Minute, "kill the tools after this long")
	if withIbtool {
		fs.StringVar(&tf.ibtool, "ibtool", "", "ibtool binary (default $IBTOOL_BIN, ./bin/ibtool, or ibtool in PATH)")
	}
	if err := parse(fs, args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() == 0 {
		return nil, nil, fmt.Errorf("%w: no tool", errUsage)
	}
	return &tf, fs.Args(), nil
}

func runRef(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	tf, tool, err := parseTool("run", args, stderr, false)
	if err != nil {
		return 0, err
	}
	f, err := attach(tf.dir)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	out, errOut, code, err := f.RunReference(ctx, tf.simHost, tool[0], tool[1:]...)
	stdout.Write(out)
	stderr.Write(errOut)
	return code, err
}

func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	tf, tool, err := parseTool("diff", args, stderr, true)
	if err != nil {
		return 0, err
	}
	bin, err := ibtoolBinary(tf.ibtool)
	if err != nil {
		return 0, err
	}
	f, err := attach(tf.dir)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, tf.timeout)
	defer cancel()
	refOut, refErr, refCode, err := f.RunReference(ctx, tf.simHost, tool[0], tool[1:]...)
	if err != nil {
		return 0, err
	}
	ourOut, ourErr, ourCode, err := f.RunIbtool(ctx, bin, tf.simHost, tool[0], tool[1:]...)
	if err != nil {
		return 0, err
	}
	cmdline := strings.Join(tool, " ")
	fmt.Fprintf(stdout, "--- %s (infiniband-diags): exit %d\n+++ ibtool %s: exit %d\n", cmdline, refCode, cmdline, ourCode)
	d := simfabric.Diff(refOut, ourOut)
	fmt.Fprint(stdout, d)
	if d == "" && refCode == ourCode {
		fmt.Fprintln(stdout, "same output and exit code")
		return exitOK, nil
	}
	if refCode != ourCode {
		fmt.Fprintf(stdout, "exit codes differ; stderr of %s:\n%s\nstderr of ibtool:\n%s", tool[0], refErr, ourErr)
	}
	return exitDiffers, nil
}

// ibtoolBinary picks the ibtool to compare: the flag, $IBTOOL_BIN,
// ./bin/ibtool (make build's output), or ibtool in PATH.
func ibtoolBinary(flagValue string) (string, error) {
	for _, p := range []string{flagValue, os.Getenv("IBTOOL_BIN"), "bin/ibtool"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return filepath.Abs(p)
		}
		if p == flagValue {
			return "", fmt.Errorf("%w: -ibtool %s: no such file", errUsage, p)
		}
	}
	if p, err := exec.LookPath("ibtool"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: no ibtool binary: run make build, or pass -ibtool or set IBTOOL_BIN", errUsage)
}
