package cmdutil

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/umad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// fabricAccess is a run's one transactor, its local port and the error
// opening them gave, set once.
type fabricAccess struct {
	once sync.Once
	x    *madrpc.Transactor
	port *rdma.Port
	err  error
}

// OpenMAD returns the run's transactor and the local port its MADs leave
// from. The first call opens the transport the options name (the simulator
// or the kernel's umad) with -t, --retries, -vv's MAD dump, --dry-run and
// the discovery's window; later calls return the same ones, so a
// fabric-wide tool's discovery and the queries after it share one
// transport. The run closes it when the tool returns.
func (f *Factory) OpenMAD(o *CommonOptions) (*madrpc.Transactor, *rdma.Port, error) {
	if f.fabric == nil {
		f.fabric = &fabricAccess{}
	}
	a := f.fabric
	a.once.Do(func() {
		opts := o.TransactorOptions()
		if o.discovery != nil {
			opts.Window = o.discovery.window()
		}
		a.x, a.port, a.err = f.openTransactorOpts(o, opts)
	})
	return a.x, a.port, a.err
}

// closeMAD closes what OpenMAD opened, if anything.
func (f *Factory) closeMAD() {
	if f.fabric != nil && f.fabric.x != nil {
		f.fabric.x.Close()
	}
}

// openTransactorOpts opens the local end port the flags name through
// endport.OpenLocal, with the transactor's options the flags give (opts),
// the run's hooks (-vv's MAD dump, -e, --dry-run, the run's end when the
// transport goes) and --sm_port, --smkey and --sa-path.
func (f *Factory) openTransactorOpts(o *CommonOptions, opts madrpc.TransactorOptions) (*madrpc.Transactor, *rdma.Port, error) {
	if o.Verbose >= 2 {
		opts.Trace = madTracer(f.IO.ErrOut)
	}
	if o.ShowErrors {
		opts.Errors = madErrorReporter(f.IO.ErrOut)
	}
	if opts.Gone == nil {
		opts.Gone = transportGone(o.Context())
	}
	o.SetDryRun(f.IO.Out, &opts)
	eo, err := f.endportOptions(o)
	if err != nil {
		return nil, nil, err
	}
	eo = append(eo,
		endport.WithTimeout(opts.Timeout),
		endport.WithRetries(o.Retries),
		endport.WithWindow(opts.Window),
		endport.WithViaSA(opts.ViaSA),
		endport.WithMKey(opts.MKey),
		endport.WithSMKey(o.SMKey),
		endport.WithSMLID(o.SMPort),
		endport.WithTrace(opts.Trace),
		endport.WithErrors(opts.Errors),
		endport.WithGone(opts.Gone),
		endport.WithDryRun(opts.DryRun),
	)
	if o.saPath != nil {
		eo = append(eo, endport.WithSAPath(*o.saPath))
	}
	f.awaitSignals()
	p, err := endport.OpenLocal(o.Context(), o.Local, eo...)
	if err != nil {
		return nil, nil, o.openError(err)
	}
	return p.Transactor, p.Local, nil
}

// endportOptions are the options every port the run opens takes: the
// simulator (--sim, or the environment through f.Getenv), the sysfs tree
// (--sysfs, $IBTOOL_SYSFS), the targets' own end ports, and no
// ibdiag.conf of endport's own: the run read the files already, and its
// flags win over them (loadConfig).
func (f *Factory) endportOptions(o *CommonOptions) ([]endport.Option, error) {
	eo := []endport.Option{endport.WithEnv(f.Getenv), endport.WithConfigFile(""), endport.WithScopes(o.scopes...)}
	if f.UseSim(o) {
		return append(eo, endport.WithSimulator(endport.SimOn)), nil
	}
	eo = append(eo, endport.WithSimulator(endport.SimOff))
	root, named := o.Sysfs, "--sysfs "
	if root == "" {
		root, named = f.Getenv(endport.EnvSysfs), endport.EnvSysfs+"="
	}
	if root != "" {
		if err := checkSysfsRoot(named+root, root); err != nil {
			return nil, err
		}
		eo = append(eo, endport.WithSysfs(root))
	}
	return eo, nil
}

// openError turns endport's error into the run's: the cause alone (the
// message the tools print), a usage error when the flags named the port
// that is not there or the simulator's variables do not parse, and
// --sa-path's resolution named after the flag.
func (o *CommonOptions) openError(err error) error {
	var oe *endport.OpenError
	if !errors.As(err, &oe) {
		return err
	}
	switch oe.Step {
	case endport.StepResolve:
		return o.localPortError(oe.Err)
	case endport.StepSetup, endport.StepSpec:
		var se *endport.SysfsRootError
		if errors.As(oe.Err, &se) && !se.Missing() {
			return oe.Err
		}
		return &UsageError{Err: oe.Err}
	case endport.StepSAPath:
		return fmt.Errorf("--sa-path %s: %w", o.SAPathArg, oe.Err)
	}
	return oe.Err
}

// TransactorOptions turns -t, --retries and -y into a transactor's
// options: the transactor puts -y's M_Key in every SMP.
func (o *CommonOptions) TransactorOptions() madrpc.TransactorOptions {
	opts := madrpc.TransactorOptions{Timeout: o.Timeout, Retries: o.Retries, ViaSA: o.ViaSA, MKey: o.MKey}
	if o.Retries == 0 {
		opts.Retries = -1 // --retries 0: one try
	}
	return opts
}

// madErrorReporter returns an Errors func that shows each failed MAD
// exchange on w as libibmad's -e does (rpc.c): a line for each retry, for
// a request that timed out for good, and for a response with an error
// status, whether or not the tool carries on.
func madErrorReporter(w io.Writer) func(error) {
	var mu sync.Mutex // discovery's requests fail from many goroutines
	return func(err error) {
		var msg string
		var te *madrpc.TimeoutError
		var se *madrpc.StatusError
		switch {
		case errors.As(err, &te):
			msg = fmt.Sprintf("timeout after %d tries, %d ms: %s to %s", te.Tries, te.Elapsed.Milliseconds(), te.Request, te.To)
		case errors.As(err, &se):
			msg = fmt.Sprintf("MAD completed with error status 0x%x; %s to %s", uint16(se.Status), se.Request, se.To)
		default:
			msg = err.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "ibwarn: %s\n", msg)
	}
}

// madTracer returns a Trace func that hex-dumps each MAD to w.
func madTracer(w io.Writer) func(out bool, p *mad.Packet) {
	return func(out bool, p *mad.Packet) {
		dir := "received from"
		if out {
			dir = "sending to"
		}
		fmt.Fprintf(w, "%s LID %d QP %d (status %d):\n%s", dir, p.Addr.LID, p.Addr.QPN, int(p.Status), hex.Dump(p.MAD))
	}
}

// OpenServerTransport opens the transport of a server tool (ibping -S,
// ibsysstat -S): on the kernel with agents that receive the requests it
// answers, on the simulator attached with the SM flag
// (endport.WithAgents).
func (f *Factory) OpenServerTransport(o *CommonOptions, agents []umad.Agent) (mad.Transport, *rdma.Port, error) {
	eo, err := f.endportOptions(o)
	if err != nil {
		return nil, nil, err
	}
	p, err := endport.OpenTransport(o.Context(), o.Local, append(eo, endport.WithAgents(agents...))...)
	if err != nil {
		return nil, nil, o.openError(err)
	}
	return p.Transport, p.Local, nil
}

// resolveLocal finds the local end port the flags and the targets' scopes
// name (endport.Local.ResolveScoped).
func (o *CommonOptions) resolveLocal(devs endport.DeviceSource) (*rdma.Device, *rdma.Port, error) {
	return o.Local.ResolveScoped(devs, o.scopes...)
}

// localPortError classes a failure to find the local end port: a usage
// error when the flags or a target named one (-C, -P, --port, a scoped
// GID), a runtime failure when the default found nothing usable (no
// devices, no active port).
func (o *CommonOptions) localPortError(err error) error {
	if o.Local == (endport.Local{}) && len(o.scopes) == 0 {
		return err
	}
	return &UsageError{Err: err}
}

// smpPath turns a target into the path an SMP takes (endport.Target.Path).
func smpPath(t endport.Target) (mad.Path, error) { return t.Path() }

// ShareCPUsWithSimulator, when the tool talks to an ibsim on this machine,
// caps the Go scheduler at one CPU fewer than the machine has while the
// tool trades MADs with it one answer at a time, and returns what undoes
// that. ibsim answers on one thread; a second scheduler thread of
// ibtool's only takes that thread's CPU (docs/bench.md has the sweeps and
// walks this shortens, and why reading the SA's tables is left alone: the
// reader would share its CPU with the garbage collector).
func (f *Factory) ShareCPUsWithSimulator(o *CommonOptions) (restore func()) {
	if !f.UseSim(o) || f.Getenv("IBSIM_SERVER_NAME") != "" {
		return func() {}
	}
	n := runtime.GOMAXPROCS(0)
	if want := min(n, runtime.NumCPU()-1); want >= 1 && want < n {
		runtime.GOMAXPROCS(want)
		return func() { runtime.GOMAXPROCS(n) }
	}
	return func() {}
}

// GMPPath turns a target into the LID route a GMP takes, or the global
// route (GRH) a GID target asks for, which Transactor.Resolve turns into a
// LID route through the SA where there is one (on RoCE the GRH stays);
// what names the MADs in the message for a DR path ("performance MADs").
func GMPPath(t endport.Target, what string) (mad.Path, error) {
	p, err := t.LIDRoutedPath(what)
	if errors.Is(err, endport.ErrNotLIDRouted) {
		return p, &UsageError{Err: err}
	}
	return p, err
}

// GMPTarget returns the path GMPs to t take, resolved (Transactor.Resolve):
// GMPPath's, except that with --sa or -D a DR target is turned into the LID it
// ends at through the SA's LinkRecords, as python-rdma's --sa does.
func (o *CommonOptions) GMPTarget(x *madrpc.Transactor, t endport.Target, what string) (mad.Path, error) {
	if o.viaSADR(t) {
		p, _ := t.Path()
		return x.LIDRoute(o.Context(), p)
	}
	p, err := GMPPath(t, what)
	if err != nil {
		return p, err
	}
	return x.Resolve(o.Context(), p)
}

// CheckGMPTarget returns the usage error GMPTarget would for t, before a
// transactor is opened.
func (o *CommonOptions) CheckGMPTarget(t endport.Target, what string) error {
	if o.viaSADR(t) {
		return nil
	}
	_, err := GMPPath(t, what)
	return err
}

// viaSADR reports whether t is a DR target that --sa, or -D/--Direct,
// turns into a LID: python-rdma's GMP tools follow a DR target through
// the SA's LinkRecords (get_gmp_path), and -D asks for a DR target.
func (o *CommonOptions) viaSADR(t endport.Target) bool {
	p, err := t.Path()
	return (o.ViaSA || o.asDR) && err == nil && p.IsDR()
}
