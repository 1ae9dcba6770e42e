package endport

import (
	"context"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/ibtool/ibtool/pkg/ibdiagconf"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/ibsim"
	"github.com/ibtool/ibtool/pkg/mad/umad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// KernelGrace is how much longer than the kernel a transactor on umad
// waits for a response: the kernel's own timeout report comes first and
// frees the TID for the resend, which the kernel would otherwise refuse
// (mad.TransactorOptions.Grace).
const KernelGrace = 50 * time.Millisecond

// DefaultRetries is how often Open's transactor resends a MAD after a
// timeout unless WithRetries says otherwise: three tries, as libibmad.
const DefaultRetries = 2

// DiscoveryWindow is the window the tools give a transactor that
// discovers the fabric (WithWindow): libibnetdisc keeps 2 SMPs in flight,
// which is what makes it slow.
const DiscoveryWindow = 64

// DefaultSMKey is the SM_Key of the SA queries mad.TransactorOptions.ViaSA
// sends when neither WithSMKey nor ibdiag.conf's sa_key gives one:
// opensm's default key.
const DefaultSMKey = 1

// Environment variables Open reads (through WithEnv's lookup, os.Getenv by
// default), as the tools read them.
const (
	// EnvSim set to "1" selects the ibsim simulator.
	EnvSim = "IBTOOL_SIM"
	// EnvSysfs names the sysfs mount point when WithSysfs gives none.
	EnvSysfs = "IBTOOL_SYSFS"
	// EnvSimSocket, set, selects the simulator as the C tools under
	// libumad2sim do, and names its socket.
	EnvSimSocket = "IBSIM_SOCKNAME"
)

// An Option changes one of Open's defaults.
type Option func(*settings)

// SimMode says whether Open talks to the ibsim simulator.
type SimMode uint8

// Simulator choices.
const (
	// SimFromEnv uses the simulator when the environment asks for it:
	// IBTOOL_SIM=1 or IBSIM_SOCKNAME set. The default.
	SimFromEnv SimMode = iota
	// SimOn always uses the simulator.
	SimOn
	// SimOff always uses the kernel's umad devices.
	SimOff
)

// String names the mode: "from environment", "on", "off".
func (m SimMode) String() string {
	switch m {
	case SimFromEnv:
		return "from environment"
	case SimOn:
		return "on"
	case SimOff:
		return "off"
	}
	return "SimMode(" + strconv.Itoa(int(m)) + ")"
}

// settings are what the options set; the zero value is Open's defaults.
type settings struct {
	getenv func(string) string

	sim    SimMode
	simCfg *ibsim.Config

	sysfs     fs.FS
	sysfsRoot string

	configPath string
	configSet  bool
	config     *ibdiagconf.Settings

	timeout    time.Duration
	timeoutSet bool
	retries    int
	retriesSet bool
	window     int
	mkey       uint64
	mkeySet    bool
	smkey      uint64
	smkeySet   bool
	smLID      rdma.LID
	viaSA      bool
	saPath     *mad.Path

	trace  func(out bool, p *mad.Packet)
	errs   func(error)
	dryRun func(ctx context.Context, p *madrpc.Plan) error
	gone   func(error)

	dial func(ctx context.Context, dev *rdma.Device, port *rdma.Port) (mad.Transport, error)

	scopes []Local
	agents []umad.Agent
	server bool
}

func (s *settings) env(name string) string {
	if s.getenv == nil {
		return os.Getenv(name)
	}
	return s.getenv(name)
}

// WithTimeout sets how long one try of a MAD waits for its answer
// (default: ibdiag.conf's timeout, else mad.DefaultTimeout).
func WithTimeout(d time.Duration) Option {
	return func(s *settings) { s.timeout, s.timeoutSet = d, true }
}

// WithRetries sets how often a MAD is sent again after a try timed out; 0
// sends each once (default DefaultRetries).
func WithRetries(n int) Option {
	return func(s *settings) { s.retries, s.retriesSet = n, true }
}

// WithWindow bounds the MADs in flight at once (default mad.DefaultWindow;
// DiscoveryWindow for a discovery).
func WithWindow(n int) Option { return func(s *settings) { s.window = n } }

// WithMKey sets the M_Key every SMP carries (default: ibdiag.conf's m_key,
// else 0).
func WithMKey(key uint64) Option { return func(s *settings) { s.mkey, s.mkeySet = key, true } }

// WithSMKey sets the SM_Key of the SA queries sent for the port: those of
// WithViaSA and PathRecord (default: ibdiag.conf's sa_key, else
// DefaultSMKey).
func WithSMKey(key uint64) Option { return func(s *settings) { s.smkey, s.smkeySet = key, true } }

// WithSMLID sends SA queries to this LID instead of the SM LID the local
// port knows.
func WithSMLID(lid rdma.LID) Option { return func(s *settings) { s.smLID = lid } }

// WithSAPath sends SA queries along p: a LID, or a port GUID or GID that
// Open first resolves through the local port's SM (python-rdma's
// --sa-path). A directed route is refused: SA queries are LID routed.
func WithSAPath(p mad.Path) Option { return func(s *settings) { s.saPath = &p } }

// WithViaSA answers SMP Gets from the SA's records instead of the nodes
// (mad.TransactorOptions.ViaSA, python-rdma's --sa).
func WithViaSA(on bool) Option { return func(s *settings) { s.viaSA = on } }

// WithSysfs reads the local devices from the sysfs tree mounted at root
// (default $IBTOOL_SYSFS, else /sys). Open fails with a *SetupError when
// root is not a directory.
func WithSysfs(root string) Option { return func(s *settings) { s.sysfs, s.sysfsRoot = nil, root } }

// WithSysfsFS reads the local devices from fsys, a tree laid out as
// /sys is (tests use fstest.MapFS); root names it in messages.
func WithSysfsFS(fsys fs.FS, root string) Option {
	return func(s *settings) { s.sysfs, s.sysfsRoot = fsys, root }
}

// WithSimulator chooses between the kernel and the ibsim simulator
// (default SimFromEnv).
func WithSimulator(m SimMode) Option { return func(s *settings) { s.sim = m } }

// WithSimConfig uses the ibsim simulator at cfg (its socket, or host and
// port, and the node to attach to) instead of the one the environment
// names; it implies SimOn.
func WithSimConfig(cfg ibsim.Config) Option {
	return func(s *settings) { s.sim, s.simCfg = SimOn, &cfg }
}

// WithEnv looks environment variables up with getenv instead of
// os.Getenv: IBTOOL_SIM, IBSIM_SOCKNAME, IBSIM_SERVER_NAME,
// IBSIM_SERVER_PORT, SIM_HOST, SIM_SET_ISSM and IBTOOL_SYSFS.
func WithEnv(getenv func(string) string) Option { return func(s *settings) { s.getenv = getenv } }

// WithConfigFile reads the ibdiag.conf at path instead of
// ibdiagconf.DefaultPath; "" reads none. A default file that is not there
// is no error; a named one must be there.
func WithConfigFile(path string) Option {
	return func(s *settings) { s.configPath, s.configSet, s.config = path, true, nil }
}

// WithConfig takes the ibdiag.conf settings from cfg instead of reading a
// file. Options given explicitly win over it.
func WithConfig(cfg *ibdiagconf.Settings) Option {
	return func(s *settings) { s.config, s.configSet = cfg, true }
}

// WithTrace has fn see every MAD sent (out) and received
// (mad.TransactorOptions.Trace).
func WithTrace(fn func(out bool, p *mad.Packet)) Option { return func(s *settings) { s.trace = fn } }

// WithErrors has fn hear of every failed request and every retry
// (mad.TransactorOptions.Errors, libibmad's -e).
func WithErrors(fn func(err error)) Option { return func(s *settings) { s.errs = fn } }

// WithDryRun hands fn the plan of every request that would change state
// instead of sending it (mad.TransactorOptions.DryRun).
func WithDryRun(fn func(ctx context.Context, p *madrpc.Plan) error) Option {
	return func(s *settings) { s.dryRun = fn }
}

// WithGone has fn called once when the transport fails for good
// (mad.TransactorOptions.Gone).
func WithGone(fn func(err error)) Option { return func(s *settings) { s.gone = fn } }

// WithTransport has open make the transport of the port found in the
// sysfs tree instead of opening its umad device: a test fake
// (madtest.New), or a transport of one's own. The simulator, when chosen,
// still takes precedence; the kernel's grace (KernelGrace) is not added.
func WithTransport(open func(ctx context.Context, dev *rdma.Device, port *rdma.Port) (mad.Transport, error)) Option {
	return func(s *settings) { s.dial = open }
}

// WithScopes adds end ports that targets name for themselves (a scoped
// GID's scope, a path spec's end_port, Target.EndPort): the port opened
// must agree with them (Local.ResolveScoped).
func WithScopes(scopes ...Local) Option {
	return func(s *settings) { s.scopes = append(s.scopes, scopes...) }
}

// WithAgents registers agents when the kernel's umad device opens, so
// that requests others send to this port reach it (a server); on the
// simulator the port attaches with the SM flag, which is what makes ibsim
// hand it unsolicited MADs.
func WithAgents(agents ...umad.Agent) Option {
	return func(s *settings) { s.agents, s.server = append(s.agents, agents...), true }
}
