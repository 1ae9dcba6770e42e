package endport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/ibtool/ibtool/pkg/ibdiagconf"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/mad/umad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Port is a local end port opened for MADs: the transactor that sends
// them, the transport under it and the port they leave from. Close
// releases it (the umad device, or the simulator's client slot).
type Port struct {
	// Transactor sends MADs from the port and matches their answers;
	// nil for a port OpenTransport opened.
	Transactor *madrpc.Transactor
	// Transport carries the MADs: a *umad.Port or an *ibsim.Client.
	Transport mad.Transport
	// Device is the RDMA device the port belongs to.
	Device *rdma.Device
	// Local is the port as sysfs, or the simulator's attach point,
	// describes it: its GUID, LID, SM LID and P_Key table.
	Local *rdma.Port
	// Simulated is true when ibsim carries the MADs.
	Simulated bool
}

// Close stops the transactor and closes the transport.
func (p *Port) Close() error {
	if p.Transactor != nil {
		return p.Transactor.Close()
	}
	return p.Transport.Close()
}

// Open opens the local end port spec names for MADs, as the tools open
// theirs: spec is any form ParseLocal reads ("mlx5_0/1", "mlx5_0", a port
// GUID or GID), or "" for the default port (ibdiag.conf's CA and Port,
// else the first active one). The MADs go through the kernel's umad
// device, with KernelGrace, or through the ibsim simulator when the
// options or the environment ask for it (IBTOOL_SIM=1, IBSIM_SOCKNAME).
// The timeout and M_Key default to ibdiag.conf's; opts change any of it.
// ctx bounds the opening only. A failure is an *OpenError.
func Open(ctx context.Context, spec string, opts ...Option) (*Port, error) {
	var l Local
	if spec != "" {
		var err error
		if l, err = ParseLocal(spec); err != nil {
			return nil, &OpenError{Step: StepSpec, Spec: spec, Err: err}
		}
	}
	return OpenLocal(ctx, l, opts...)
}

// OpenLocal is Open for an end port already parsed (FromFlagArgs,
// ParseLocal); the zero Local is the default port.
func OpenLocal(ctx context.Context, l Local, opts ...Option) (*Port, error) {
	s, err := newSettings(l, opts)
	if err != nil {
		return nil, err
	}
	p, err := s.openTransport(ctx, l)
	if err != nil {
		return nil, err
	}
	topts := s.transactorOptions(p)
	x := madrpc.NewTransactor(p.Transport, topts)
	if err := s.useSAPath(ctx, x, topts.SA); err != nil {
		x.Close()
		return nil, &OpenError{Step: StepSAPath, Spec: l.String(), Err: err}
	}
	p.Transactor = x
	return p, nil
}

// OpenTransport opens the end port l names as OpenLocal does, without a
// transactor: a server (WithAgents) receives and answers on the transport
// itself. The options of the transactor (timeout, keys, hooks) do not
// apply.
func OpenTransport(ctx context.Context, l Local, opts ...Option) (*Port, error) {
	s, err := newSettings(l, opts)
	if err != nil {
		return nil, err
	}
	return s.openTransport(ctx, l)
}

// Devices returns the device tree Open finds ports in, as the options and
// the environment choose it: the sysfs tree (WithSysfs, $IBTOOL_SYSFS,
// /sys), or on the simulator its attach point as device ibsim0, the way
// libumad2sim shows it to the C tools. The simulator's client slot is
// held only while its attach point is read, and freed even when ctx ends
// early. A failure is an *OpenError.
func Devices(ctx context.Context, opts ...Option) (*rdma.FS, error) {
	s, err := newSettings(Local{}, opts)
	if err != nil {
		return nil, err
	}
	if !s.useSim() {
		devs, err := s.sysfsDevices()
		if err != nil {
			return nil, &OpenError{Step: StepSetup, Err: err}
		}
		return devs, nil
	}
	cfg, err := s.simConfig()
	if err != nil {
		return nil, &OpenError{Step: StepSetup, Err: err}
	}
	c, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		return nil, &OpenError{Step: StepTransport, Err: err}
	}
	fsys := c.SysFS()
	if err := c.Close(); err != nil {
		return nil, &OpenError{Step: StepTransport, Err: err}
	}
	return rdma.NewFS(fsys, simRoot), nil
}

// simRoot names the simulator's attach point in messages.
const simRoot = ibsim.DeviceName + " (simulator)"

// simConfig is where the simulator is: WithSimConfig's, else the
// environment's.
func (s *settings) simConfig() (ibsim.Config, error) {
	if s.simCfg != nil {
		return *s.simCfg, nil
	}
	return ibsim.FromEnv(s.env)
}

// newSettings applies opts over the defaults and reads ibdiag.conf.
func newSettings(l Local, opts []Option) (*settings, error) {
	s := &settings{}
	for _, o := range opts {
		o(s)
	}
	if err := s.loadConfig(); err != nil {
		return nil, &OpenError{Step: StepSetup, Spec: l.String(), Err: err}
	}
	return s, nil
}

// loadConfig reads the ibdiag.conf the options name into s.config.
func (s *settings) loadConfig() error {
	if s.config != nil {
		return nil
	}
	path, named := s.configPath, s.configSet
	if !named {
		path = ibdiagconf.DefaultPath
	}
	if path == "" {
		return nil
	}
	cfg := &ibdiagconf.Settings{}
	if err := cfg.Load(path); err != nil && (named || !errors.Is(err, fs.ErrNotExist)) {
		return err
	}
	s.config = cfg
	return nil
}

// has reports whether the ibdiag.conf read set k.
func (s *settings) has(k ibdiagconf.Key) bool { return s.config != nil && s.config.Has(k) }

// useSim reports whether the MADs go through the simulator.
func (s *settings) useSim() bool {
	switch s.sim {
	case SimOn:
		return true
	case SimOff:
		return false
	}
	return SimulatorFromEnv(s.env)
}

// SimulatorFromEnv reports whether the environment, read with getenv,
// asks for the ibsim simulator: IBTOOL_SIM=1, or IBSIM_SOCKNAME set (as
// for the C tools under libumad2sim).
func SimulatorFromEnv(getenv func(string) string) bool {
	return getenv(EnvSim) == "1" || getenv(EnvSimSocket) != ""
}

// local is l with ibdiag.conf's CA and Port where l leaves them open, as
// infiniband-diags takes them when -C and -P are not given.
func (s *settings) local(l Local) (Local, error) {
	if l.Kind != ByName || (!s.has(ibdiagconf.KeyCA) || l.CA != "") && (!s.has(ibdiagconf.KeyPort) || l.Port != 0) {
		return l, nil
	}
	ca, port := l.CA, int(l.Port)
	if ca == "" && s.has(ibdiagconf.KeyCA) {
		ca = s.config.CA
	}
	if port == 0 && s.has(ibdiagconf.KeyPort) {
		port = s.config.Port
	}
	nl, err := FromFlags(ca, port)
	if err != nil {
		return l, fmt.Errorf("%s: %w", s.config.Where(ibdiagconf.KeyCA), err)
	}
	return nl, nil
}

// openTransport finds the port and opens its transport.
func (s *settings) openTransport(ctx context.Context, l Local) (*Port, error) {
	spec := l.String()
	l, err := s.local(l)
	if err != nil {
		return nil, &OpenError{Step: StepSetup, Spec: spec, Err: err}
	}
	if s.useSim() {
		return s.openSim(ctx, l, spec)
	}
	return s.openKernel(ctx, l, spec)
}

// openSim attaches to ibsim and checks that l names its attach point,
// device ibsim0, as libumad2sim shows it to the C tools.
func (s *settings) openSim(ctx context.Context, l Local, spec string) (*Port, error) {
	cfg, err := s.simConfig()
	if err != nil {
		return nil, &OpenError{Step: StepSetup, Spec: spec, Err: err}
	}
	cfg.IsSM = cfg.IsSM || s.server
	c, err := ibsim.Dial(ctx, cfg)
	if err != nil {
		return nil, &OpenError{Step: StepTransport, Spec: spec, Err: err}
	}
	dev, port, err := l.ResolveScoped(simDevices(c), s.scopes...)
	if err != nil {
		c.Close()
		return nil, &OpenError{Step: StepResolve, Spec: spec, Err: err}
	}
	return &Port{Transport: c, Device: dev, Local: port, Simulated: true}, nil
}

// simDevices is the attach point of c as a device list: built from the
// attach info where that gives what its sysfs tree reads as (every CA,
// switch and router), else read from the tree.
func simDevices(c *ibsim.Client) DeviceSource {
	info := c.Info()
	if d, ok := info.Device(); ok {
		return deviceList{d}
	}
	return rdma.NewFS(c.SysFS(), simRoot)
}

// deviceList is a DeviceSource of devices read already.
type deviceList []*rdma.Device

// Devices returns the list.
func (l deviceList) Devices() ([]*rdma.Device, error) { return l, nil }

// openKernel opens the umad device of the port l names.
func (s *settings) openKernel(ctx context.Context, l Local, spec string) (*Port, error) {
	devs, err := s.sysfsDevices()
	if err != nil {
		return nil, &OpenError{Step: StepSetup, Spec: spec, Err: err}
	}
	dev, port, err := l.ResolveScoped(devs, s.scopes...)
	if err != nil {
		return nil, &OpenError{Step: StepResolve, Spec: spec, Err: err}
	}
	var tr mad.Transport
	if s.dial != nil {
		tr, err = s.dial(ctx, dev, port)
	} else {
		tr, err = umad.Open(ctx, devs, dev.Name, port.Number, umad.Options{Agents: s.agents})
	}
	if err != nil {
		return nil, &OpenError{Step: StepTransport, Spec: spec, Err: err}
	}
	return &Port{Transport: tr, Device: dev, Local: port}, nil
}

// sysfsDevices returns the sysfs tree WithSysfs, $IBTOOL_SYSFS or /sys
// names. A root named by an option or the variable must be a directory: a
// mistyped one would otherwise read as a machine without RDMA devices.
func (s *settings) sysfsDevices() (*rdma.FS, error) {
	if s.sysfs != nil {
		return rdma.NewFS(s.sysfs, s.sysfsRoot), nil
	}
	root := s.sysfsRoot
	if root == "" {
		root = s.env(EnvSysfs)
	}
	if root == "" {
		return rdma.NewFS(os.DirFS("/sys"), "/sys"), nil
	}
	if err := CheckSysfsRoot(root); err != nil {
		return nil, err
	}
	return rdma.NewFS(os.DirFS(root), root), nil
}

// CheckSysfsRoot checks that root, a sysfs mount point, is a directory
// (after symbolic links). One that is not there, or not a directory, is a
// *SysfsRootError.
func CheckSysfsRoot(root string) error {
	fi, err := os.Stat(root)
	switch {
	case err != nil:
		return &SysfsRootError{Root: root, Err: err}
	case !fi.IsDir():
		return &SysfsRootError{Root: root, Err: errNotDir}
	}
	return nil
}

// msDuration is n milliseconds.
func msDuration(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// transactorOptions are the transactor's options for p.
func (s *settings) transactorOptions(p *Port) madrpc.TransactorOptions {
	opts := madrpc.TransactorOptions{
		Timeout: s.timeout,
		Retries: DefaultRetries,
		Window:  s.window,
		Trace:   s.trace,
		Errors:  s.errs,
		Gone:    s.gone,
		DryRun:  s.dryRun,
		ViaSA:   s.viaSA,
		MKey:    s.mkey,
	}
	if !s.timeoutSet && s.has(ibdiagconf.KeyTimeout) {
		opts.Timeout = msDuration(s.config.TimeoutMS)
	}
	if s.retriesSet {
		opts.Retries = s.retries
		if s.retries <= 0 {
			opts.Retries = -1 // none: the transactor's 0 is its default
		}
	}
	if !s.mkeySet && s.has(ibdiagconf.KeyMKey) {
		opts.MKey = s.config.MKey
	}
	if !p.Simulated && s.dial == nil {
		opts.Grace = KernelGrace
	}
	smKey := uint64(DefaultSMKey)
	switch {
	case s.smkeySet:
		smKey = s.smkey
	case s.has(ibdiagconf.KeySAKey):
		smKey = s.config.SAKey
	}
	smLID := p.Local.SMLID
	if s.smLID != 0 {
		smLID = s.smLID
	}
	opts.SA = &madrpc.SAAddress{SMLID: smLID, SL: p.Local.SMSL, PortGUID: p.Local.GUID, LID: p.Local.LID, SMKey: smKey, PKeys: p.Local.PKeys}
	return opts
}

// useSAPath points x's SA address at WithSAPath's path, a port GUID or
// GID first resolved through the local port's SM (python-rdma's
// resolve_path of the SA path).
func (s *settings) useSAPath(ctx context.Context, x *madrpc.Transactor, sa *madrpc.SAAddress) error {
	if s.saPath == nil {
		return nil
	}
	if s.saPath.IsDR() {
		return errSAPathDR
	}
	p, err := x.Resolve(ctx, *s.saPath)
	if err != nil {
		return err
	}
	sa.SMLID, sa.SL = p.LID, p.SL
	return nil
}
