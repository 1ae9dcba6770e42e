package simfabric

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Options configure Start. Exactly one of NetFile and Net is set.
type Options struct {
	// NetFile is the path of a net file. ibsim runs in its directory, so
	// that its include lines resolve as they would by hand.
	NetFile string
	// Net is the content of a net file (FatTree's output, say); Start
	// writes it to the fabric directory.
	Net []byte
	// SMNode is the node opensm attaches to (SIM_HOST); "" means ibsim's
	// default port, the first node of the net file.
	SMNode string
	// RoutingEngine, when not "", is passed to opensm as -R (for example
	// "updn" or "ftree"); "" keeps opensm's default, minhop.
	RoutingEngine string
	// OpenSMArgs are added to opensm's command line.
	OpenSMArgs []string
	// NoSM starts ibsim alone: the ports stay in Initialize with no LIDs,
	// which directed-route discovery does not need. Big fabrics then
	// start in ibsim's parse time instead of opensm's routing time.
	NoSM bool
	// Timeout bounds Start; 0 means DefaultTimeout for the fabric's size.
	Timeout time.Duration
	// TempDir is where the fabric directory is made; "" means os.TempDir.
	TempDir string
	// Detach leaves ibsim and opensm running after the process that
	// started them exits (the simfab command's start). By default they are
	// killed when it exits, however it exits.
	Detach bool
	// Keep keeps the fabric directory when the fabric stops, as
	// IBTOOL_KEEP_FABRIC=1 does.
	Keep bool
	// Log, when not nil, receives a line per phase of Start, with its time.
	Log io.Writer
}

// Environment variables the bench reads.
const (
	// EnvKeep set to 1 keeps every fabric directory when the fabric stops.
	EnvKeep = "IBTOOL_KEEP_FABRIC"
	// EnvRequire set to 1 turns ForTest's skip for a missing bench into a
	// failure (make test sets it).
	EnvRequire = "IBTOOL_REQUIRE_BENCH"
)

// Files in a fabric directory.
const (
	stateFile   = "fabric.json"
	netFileName = "net"
	consoleFIFO = "console"    // ibsim's stdin
	consoleOut  = "ibsim.out"  // ibsim's stdout: console replies
	ibsimLog    = "ibsim.log"  // ibsim's stderr: warnings
	osmLog      = "opensm.log" // opensm -f
	osmOut      = "opensm.out" // opensm's stdout and stderr
	consoleLock = "console.lock"
	runsDir     = "runs"
)

// Timing is how long the phases of Start took.
type Timing struct {
	// Ibsim is from Start to ibsim's console prompt and control socket: the
	// time ibsim takes to read the net file.
	Ibsim time.Duration `json:"ibsimNs"`
	// SubnetUp is from opensm's start to its "SUBNET UP".
	SubnetUp time.Duration `json:"subnetUpNs"`
	// Verify is the time spent checking the ports with ibsim's Dump.
	Verify time.Duration `json:"verifyNs"`
	// Total is the whole of Start.
	Total time.Duration `json:"totalNs"`
}

// String formats t for a log line.
func (t Timing) String() string {
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%v (ibsim %v, opensm %v, verify %v)", r(t.Total), r(t.Ibsim), r(t.SubnetUp), r(t.Verify))
}

// Fabric is a running ibsim with opensm on it, started by Start or found by
// Attach. Its methods are safe for concurrent use.
type Fabric struct {
	dir      string
	sockName string
	netPath  string
	net      *Net
	smNode   string
	keep     bool
	timing   Timing
	started  time.Time

	ibsim, opensm *proc

	consoleMu sync.Mutex
	sweepMu   sync.Mutex // guards sweepMark

	slots chan struct{} // client slots for the runners

	heldMu sync.Mutex
	held   []net.PacketConn // dead tools' socket names, kept until ibsim took their attach (deadclients.go)

	stopOnce sync.Once
	stopErr  error
}

// Dir returns the fabric directory: logs, console FIFO, fabric.json.
func (f *Fabric) Dir() string { return f.dir }

// SockName returns the fabric's IBSIM_SOCKNAME.
func (f *Fabric) SockName() string { return f.sockName }

// Net returns the parsed net file of the fabric.
func (f *Fabric) Net() *Net { return f.net }

// NetFile returns the path of the fabric's net file.
func (f *Fabric) NetFile() string { return f.netPath }

// SMNode returns the node opensm is attached to.
func (f *Fabric) SMNode() string { return f.smNode }

// Timing returns how long Start took, phase by phase.
func (f *Fabric) Timing() Timing { return f.timing }

// PIDs returns the process IDs of ibsim and opensm (0 when not started).
func (f *Fabric) PIDs() (ibsim, opensm int) { return f.ibsim.PID(), f.opensm.PID() }

// Env returns the variables a simulator client attaching at node simHost
// needs, to add to its environment: IBSIM_SOCKNAME, and SIM_HOST unless
// simHost is "" (ibsim's default port).
func (f *Fabric) Env(simHost string) []string {
	env := []string{"IBSIM_SOCKNAME=" + f.sockName}
	if simHost != "" {
		env = append(env, "SIM_HOST="+simHost)
	}
	return env
}

func (f *Fabric) path(name string) string { return filepath.Join(f.dir, name) }

// DefaultTimeout returns Start's timeout for a fabric of the given size:
// 30 s, plus 10 ms per node, plus 1 µs per node squared for opensm's
// routing, which grows with switches times LIDs: about three times the
// start-up times docs/bench.md records for fabrics of 4,000 to 30,000
// nodes.
func DefaultTimeout(c NetCounts) time.Duration {
	n := time.Duration(c.Nodes)
	return 30*time.Second + n*10*time.Millisecond + n*n*time.Microsecond
}

// Start brings up a fabric as Options describe and returns once it is ready
// (see the package documentation), or fails with an error that ends with
// the tails of ibsim's and opensm's logs. On failure everything it started
// is stopped.
func Start(ctx context.Context, opts Options) (_ *Fabric, err error) {
	t0 := time.Now()
	if err := Available(); err != nil {
		return nil, err
	}
	if (opts.NetFile == "") == (opts.Net == nil) {
		return nil, errors.New("simfabric: set exactly one of Options.NetFile and Options.Net")
	}
	dir, err := os.MkdirTemp(opts.TempDir, "ibtool-fabric-")
	if err != nil {
		return nil, fmt.Errorf("simfabric: making the fabric directory: %w", err)
	}
	f := &Fabric{
		dir:      dir,
		started:  t0,
		sockName: filepath.Base(dir),
		keep:     opts.Keep || os.Getenv(EnvKeep) == "1",
		slots:    make(chan struct{}, maxClients),
	}
	if !opts.Detach {
		live.add(f)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("simfabric: starting fabric in %s: %w%s", dir, err, f.logTails())
			f.Stop()
		}
	}()
	if err := f.loadNet(opts); err != nil {
		return nil, err
	}
	counts := f.net.Counts()
	limits, err := counts.IbsimLimits()
	if err != nil {
		return nil, err
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout(counts)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logf := func(format string, a ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "simfabric: "+format+"\n", a...)
		}
	}

	logf("starting ibsim on %s (%d nodes, %d switches) in %s", f.netPath, counts.Nodes, counts.Switches, dir)
	if err := f.startIbsim(ctx, limits, opts.Detach); err != nil {
		return nil, err
	}
	f.timing.Ibsim = time.Since(t0)
	logf("ibsim ready in %v", f.timing.Ibsim.Round(time.Millisecond))

	if opts.NoSM {
		f.timing.Total = time.Since(t0)
		logf("no subnet manager; fabric up in %v", f.timing.Total.Round(time.Millisecond))
		if err := f.writeState(); err != nil {
			return nil, err
		}
		return f, nil
	}
	t1 := time.Now()
	if err := f.startOpenSM(ctx, opts); err != nil {
		return nil, err
	}
	f.timing.SubnetUp = time.Since(t1)
	logf("opensm: SUBNET UP in %v", f.timing.SubnetUp.Round(time.Millisecond))

	t2 := time.Now()
	if err := f.waitPorts(ctx, counts.Links); err != nil {
		return nil, fmt.Errorf("opensm reported SUBNET UP, but: %w", err)
	}
	f.timing.Verify = time.Since(t2)
	f.timing.Total = time.Since(t0)
	logf("all %d cabled ports Active; fabric up in %v", counts.Links, f.timing)
	if err := f.writeState(); err != nil {
		return nil, err
	}
	return f, nil
}

// loadNet writes or locates the net file and parses it.
func (f *Fabric) loadNet(opts Options) error {
	if opts.Net != nil {
		f.netPath = f.path(netFileName)
		if err := os.WriteFile(f.netPath, opts.Net, 0o644); err != nil {
			return fmt.Errorf("writing net file: %w", err)
		}
	} else {
		abs, err := filepath.Abs(opts.NetFile)
		if err != nil {
			return fmt.Errorf("net file %s: %w", opts.NetFile, err)
		}
		f.netPath = abs
	}
	net, err := ReadNetFile(f.netPath)
	if err != nil {
		return err
	}
	if len(net.Nodes) == 0 {
		return fmt.Errorf("%w: %s: no node records", ErrNetSyntax, f.netPath)
	}
	f.net = net
	f.smNode = opts.SMNode
	if f.smNode == "" {
		f.smNode = net.Nodes[0].ID
	} else if net.Node(f.smNode) == nil {
		return fmt.Errorf("SM node %q is not in %s", f.smNode, f.netPath)
	}
	return nil
}

// Stop kills opensm and ibsim (their whole process groups) and removes the
// fabric directory unless it is kept. It is safe to call more than once and
// on a fabric that only partly started; later calls return the first
// call's error.
func (f *Fabric) Stop() error {
	f.stopOnce.Do(func() {
		live.remove(f)
		var errs []error
		// opensm first: it is ibsim's client, and once ibsim is gone it
		// may spin instead of exiting.
		for _, p := range []*proc{f.opensm, f.ibsim} {
			if err := p.kill(); err != nil {
				errs = append(errs, err)
			}
		}
		f.closeHeld()
		if !f.keep && f.dir != "" {
			if err := os.RemoveAll(f.dir); err != nil {
				errs = append(errs, fmt.Errorf("removing fabric directory: %w", err))
			}
		}
		f.stopErr = errors.Join(errs...)
	})
	return f.stopErr
}

// live holds the fabrics this process started and has not stopped, except
// detached ones, for Main to stop on a signal.
var live fabricSet

type fabricSet struct {
	sync.Mutex
	m map[*Fabric]bool
}

func (s *fabricSet) add(f *Fabric) {
	s.Lock()
	defer s.Unlock()
	if s.m == nil {
		s.m = make(map[*Fabric]bool)
	}
	s.m[f] = true
}

func (s *fabricSet) remove(f *Fabric) {
	s.Lock()
	defer s.Unlock()
	delete(s.m, f)
}

// stopAll stops every fabric in the set, also those still starting.
func (s *fabricSet) stopAll() {
	s.Lock()
	all := make([]*Fabric, 0, len(s.m))
	for f := range s.m {
		all = append(all, f)
	}
	s.Unlock()
	for _, f := range all {
		f.Stop()
	}
}
