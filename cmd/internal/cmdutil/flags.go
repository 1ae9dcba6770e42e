package cmdutil

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/pkg/endport"
	"github.com/ibtool/ibtool/pkg/ibdiagconf"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// flagSet selects which groups of shared flags a tool takes.
type flagSet uint

const (
	// FlagsLocalPort adds -C/--Ca, -P/--Port and --port: the local end port.
	FlagsLocalPort flagSet = 1 << iota
	// FlagsMAD adds -t/--timeout and --retries.
	FlagsMAD
	// FlagsJSON adds --json.
	FlagsJSON
	// FlagsTarget adds -L/--Lid, -G/--Guid and -D/--Direct, which assert
	// the kind of the target address (parseTarget).
	FlagsTarget
	// FlagsNodeMap adds --node-name-map.
	FlagsNodeMap
	// FlagsNoDebugShort leaves -d to the tool (iblinkinfo's --down):
	// --debug stays.
	FlagsNoDebugShort
	// FlagsSA adds --sa: SMP Gets answered by the SA's records.
	FlagsSA
	// FlagsDryRun adds --dry-run: plan the MADs that change state, send
	// none of them (dryrun.go).
	FlagsDryRun
	// FlagsConfig adds -z/--config and reads ibdiag.conf (config.go).
	// FlagsLocalPort and FlagsMAD imply it: every infiniband-diags tool
	// that parses its options with ibdiag_process_opts takes -z.
	FlagsConfig
	// FlagsNoSMPortShort leaves -s to the tool (ibnetdiscover's --show,
	// saquery's isSM query, ...): FlagsMAD's --sm_port stays.
	FlagsNoSMPortShort
	// FlagsMKey adds -y/--m_key: the M_Key of every SMP the run sends
	// (mkey.go). AddDiscoveryFlags implies it.
	FlagsMKey
)

// CommonOptions are the flags shared by every tool, parsed before the tool runs.
type CommonOptions struct {
	CA       string // -C: local CA name or node GUID, as typed
	CAPort   int    // -P as a port number (0: the first active port, or -P named no number)
	PortSpec string // --port ca/port, port GUID or GID
	// Local is the local end port -C/-P or --port name, parsed by finish;
	// the zero Local is the default port.
	Local endport.Local
	// scopes are the local end ports the targets name for themselves
	// (endport.Target.EndPort), which must agree with Local and pick the
	// port when Local is the default (resolveLocal).
	scopes  []endport.Local
	portArg string // -P as typed: a port number (decimal or 0x hex, never octal) or, without -C, an end-port spec
	// asLID, asGUID and asDR are -L, -G and -D.
	asLID, asGUID, asDR bool
	Timeout             time.Duration // -t: per-MAD timeout
	Retries             int           // --retries: resends after a timeout
	Verbose             int           // -v, repeatable; -d counts too
	JSON                bool          // --json: one JSON document instead of text
	Sim                 bool          // --sim: use the ibsim simulator instead of the kernel
	Sysfs               string        // --sysfs: sysfs mount point (default $IBTOOL_SYSFS or /sys)
	NodeMap             string        // --node-name-map: node name map file ("": the default, if there)
	ViaSA               bool          // --sa: ask the SA for the records instead of sending SMPs
	SMKey               uint64        // --smkey: the SM_Key of --sa's queries
	MKey                uint64        // -y: the M_Key of every SMP (ibdiag.conf's m_key when not given)
	mkeyArg             string        // -y as typed
	SAPathArg           string        // --sa-path: where SA queries go (python-rdma's), implies --sa
	saPath              *mad.Path     // --sa-path parsed (finishSAPath)
	DryRun              bool          // --dry-run: print the state-changing MADs instead of sending them
	PlanLog             *dryRunLog    // what --dry-run did not send
	ConfigFile          string        // -z: an ibdiag.conf read over the default one
	SMPort              rdma.LID      // -s/--sm_port: the SM's LID for SA queries (0: the one the local port knows)
	ShowErrors          bool          // -e/--errors: show failed sends and receives, timeouts and retries on stderr
	smPortArg           string        // -s as typed
	// Config is what the ibdiag.conf files set, read by Finish: the
	// common options take CA, Port, timeout and sa_key from it where
	// their flags were not given; tools read the other keys.
	Config ibdiagconf.Settings
	// defaultConfig is the ibdiag.conf read first (Factory.IBDiagConf).
	defaultConfig string
	saFlags       bool // FlagsSA registered --smkey
	timeoutM      int  // -t as infiniband-diags takes it, in milliseconds
	Ctx           context.Context
	// Open returns the run's transactor and local port, opened on the
	// first call (Factory.OpenMAD). AddCommonFlags sets it; tests
	// replace it with a fake.
	Open func() (*madrpc.Transactor, *rdma.Port, error)
	// discovery, when the tool discovers the fabric, gives the
	// transactor its window.
	discovery *DiscoveryOptions
}

// Transactor is Open for tools that do not need the local port.
func (o *CommonOptions) Transactor() (*madrpc.Transactor, error) {
	x, _, err := o.Open()
	return x, err
}

// AddCommonFlags registers the shared flags of the groups in set on c, plus
// the ones every tool takes (-v, -d, --sim, --sysfs), and sets o.Open.
func AddCommonFlags(c *cobra.Command, f *Factory, o *CommonOptions, set flagSet) {
	o.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return f.OpenMAD(o) }
	fl := c.Flags()
	fl.CountVarP(&o.Verbose, "verbose", "v", "increase verbosity (-vv also dumps MADs)")
	fl.Count("verbosity", "the same as -v (python-rdma's long name of it)")
	if set&FlagsNoDebugShort != 0 {
		fl.Count("debug", "raise debug level (same as -v)")
	} else {
		fl.CountP("debug", "d", "raise debug level (same as -v)")
	}
	fl.BoolVar(&o.Sim, "sim", false, "use the ibsim simulator (also IBTOOL_SIM=1 or IBSIM_SOCKNAME set)")
	fl.StringVar(&o.Sysfs, "sysfs", "", "sysfs mount point (default $IBTOOL_SYSFS or /sys)")
	if set&(FlagsLocalPort|FlagsMAD|FlagsConfig) != 0 {
		o.defaultConfig = f.IBDiagConf
		fl.StringVarP(&o.ConfigFile, "config", "z", "", "read defaults from this ibdiag.conf after "+ibdiagconf.DefaultPath+" (flags win)")
	}
	if set&FlagsLocalPort != 0 {
		fl.StringVarP(&o.CA, "Ca", "C", "", "local CA name or node GUID")
		fl.StringVarP(&o.portArg, "Port", "P", "", "local CA port number (decimal or 0x hex); without -C also ca/port, port GUID or port GID")
		fl.StringVar(&o.PortSpec, "port", "", "local end port as ca/port, port GUID or port GID")
	}
	if set&FlagsMAD != 0 {
		fl.IntVarP(&o.timeoutM, "timeout", "t", 0, "timeout per MAD in milliseconds (0: the default)")
		fl.IntVar(&o.Retries, "retries", 2, "resends of a MAD after a timeout (2: three tries, as libibmad)")
		smShort := "s"
		if set&FlagsNoSMPortShort != 0 || fl.ShorthandLookup("s") != nil {
			smShort = ""
		}
		fl.StringVarP(&o.smPortArg, "sm_port", smShort, "", "the SM's LID for SA queries, instead of the SM LID the local port knows")
		fl.BoolVarP(&o.ShowErrors, "errors", "e", false, "show send and receive errors: each retry, timeout and error status, as it happens")
	}
	if set&FlagsTarget != 0 {
		AddTargetFlags(c, o, "LGD")
	}
	if set&FlagsJSON != 0 {
		fl.BoolVar(&o.JSON, "json", false, "print one JSON document")
		fl.BoolVar(&f.names.on, "int-names", false, "name fields as the IBA does (python-rdma's names), not as libibmad labels them")
	}
	if set&FlagsNodeMap != 0 {
		fl.StringVar(&o.NodeMap, "node-name-map", "", "node name map file (default "+nodemap.DefaultPath+" when there)")
	}
	if set&FlagsSA != 0 {
		o.saFlags = true
		fl.BoolVar(&o.ViaSA, "sa", false, "ask the SA for the records instead of sending SMPs (LID targets)")
		fl.Uint64Var(&o.SMKey, "smkey", 1, "SM_Key of the SA queries --sa sends (opensm's default key is 1)")
		fl.StringVar(&o.SAPathArg, "sa-path", "", "send SA queries to this LID, port GUID, GID or IBPath(...) instead of the local port's SM; implies --sa")
	}
	if set&FlagsMKey != 0 {
		addMKeyFlag(c, o)
	}
	if set&FlagsDryRun != 0 {
		fl.BoolVar(&o.DryRun, "dry-run", false, "read as usual, but print each MAD that would change the fabric (Set, Trap) instead of sending it")
	}
}

// Finish folds flags that need post-processing into o: ibdiag.conf's
// values into the flags not given, -d into the verbosity, -t milliseconds
// into Timeout, and -C/-P or --port into Local. A malformed value is a
// one-line usage error.
func (o *CommonOptions) Finish(c *cobra.Command) error {
	o.Ctx = c.Context()
	if err := o.loadConfig(c.Flags()); err != nil {
		return err
	}
	if err := o.finishMKey(c.InOrStdin(), c.ErrOrStderr()); err != nil {
		return err
	}
	o.Verbose += extraVerbosity(c.Flags())
	if o.timeoutM < 0 {
		return UsageErrorf("invalid timeout %d ms: want 0 (the default) or more", o.timeoutM)
	}
	if o.timeoutM > 0 {
		o.Timeout = time.Duration(o.timeoutM) * time.Millisecond
	}
	if o.Retries < 0 {
		return UsageErrorf("invalid --retries %d: want 0 or more", o.Retries)
	}
	if o.smPortArg != "" {
		l, err := rdma.ParseLID(o.smPortArg)
		if err != nil || !mad.IsUnicastLID(l) {
			return UsageErrorf("invalid --sm_port %q: want the SM's unicast LID (1 to 0xbfff)", o.smPortArg)
		}
		o.SMPort = l
	}
	if n := Count(o.asLID, o.asGUID, o.asDR); n > 1 {
		return UsageErrorf("-L, -G and -D each assert the kind of the target; give at most one")
	}
	if err := o.finishSAPath(); err != nil {
		return err
	}
	return o.finishLocal()
}

// extraVerbosity is what --debug (-d) and --verbosity add to -v: each
// counts as one more -v, whichever spelling the tool takes.
func extraVerbosity(fl *pflag.FlagSet) int {
	n := 0
	for _, name := range []string{"debug", "verbosity"} {
		if c, err := fl.GetCount(name); err == nil {
			n += c
		}
	}
	return n
}

// finishLocal parses -C, -P and --port into o.Local: -C and -P take
// python-rdma's forms besides infiniband-diags' (endport.FromFlagArgs).
func (o *CommonOptions) finishLocal() error {
	if o.PortSpec != "" {
		if o.CA != "" || o.portArg != "" {
			return UsageErrorf("--port %q and -C/-P both name the local port; give one", o.PortSpec)
		}
		l, err := endport.ParseLocal(o.PortSpec)
		if err != nil {
			return &UsageError{Err: err}
		}
		o.Local = l
		return nil
	}
	l, err := endport.FromFlagArgs(o.CA, o.portArg)
	if err != nil {
		return &UsageError{Err: err}
	}
	o.Local = l
	if l.Kind == endport.ByName || l.Kind == endport.ByNodeGUID {
		o.CAPort = int(l.Port)
	}
	return nil
}

// Context is the command's context: it ends on SIGINT or SIGTERM, so tools
// release what they hold on the fabric (ibsim slots, umad agents) on the way
// out.
func (o *CommonOptions) Context() context.Context {
	if o.Ctx == nil {
		return context.Background()
	}
	return o.Ctx
}

// targetKind is the kind -L, -G or -D asserts, or endport.Any.
func (o *CommonOptions) targetKind() endport.Kind {
	switch {
	case o.asLID:
		return endport.LID
	case o.asGUID:
		return endport.GUID
	case o.asDR:
		return endport.DirectRoute
	}
	return endport.Any
}

// ParseTarget parses a target address argument. Its format decides the
// kind; -L, -G or -D only assert it. A malformed target, or one of another
// kind than asserted, is a one-line usage error. The local end port a
// target names (a scoped GID's scope, a path spec's end_port) is kept for
// when the transactor opens, which sends from it.
func (o *CommonOptions) ParseTarget(s string) (endport.Target, error) {
	t, err := endport.ParseTarget(s, o.targetKind())
	if err != nil {
		return endport.Target{}, &UsageError{Err: err}
	}
	if l, ok := t.EndPort(); ok {
		o.scopes = append(o.scopes, l)
	}
	return t, nil
}

// Count returns how many of bs are true (flags that exclude each other).
func Count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// AddTargetFlags adds the target assertions named by letters (L, G, D):
// tools whose own options take some of those letters (perfquery's -D is
// --xmtdisc, ibaddr's -L is --Lid_show) add only the others.
func AddTargetFlags(c *cobra.Command, o *CommonOptions, letters string) {
	fl := c.Flags()
	for _, l := range letters {
		switch l {
		case 'L':
			fl.BoolVarP(&o.asLID, "Lid", "L", false, "the target must be a LID (the format decides anyway)")
		case 'G':
			fl.BoolVarP(&o.asGUID, "Guid", "G", false, "the target must be a port GUID (the format decides anyway)")
		case 'D':
			fl.BoolVarP(&o.asDR, "Direct", "D", false, "the target must be a directed-route path (0,1,3)")
		}
	}
}

// AddTargetLongFlags adds the target assertions named by letters (L, G,
// D) by their long names alone (--Lid, --Guid, --Direct): python-rdma's
// ibtool keeps the long name where the tool's own option has the letter
// (perfquery's -D is --xmtdisc, ibaddr's -L is --Lid_show).
func AddTargetLongFlags(c *cobra.Command, o *CommonOptions, letters string) {
	fl := c.Flags()
	for _, l := range letters {
		switch l {
		case 'L':
			fl.BoolVar(&o.asLID, "Lid", false, "the target must be a LID (the format decides anyway)")
		case 'G':
			fl.BoolVar(&o.asGUID, "Guid", false, "the target must be a port GUID (the format decides anyway)")
		case 'D':
			fl.BoolVar(&o.asDR, "Direct", false, "the target must be a directed-route path (0,1,3)")
		}
	}
}

// LoadNodeMap reads the node name map --node-name-map names, or the
// default one when it exists. A bad named map is a usage error; a bad
// default map is a warning on errOut, and no map, as infiniband-diags
// does.
func (o *CommonOptions) LoadNodeMap(tool string, errOut io.Writer) (*nodemap.Map, error) {
	m, err := nodemap.Load(o.NodeMap)
	if err == nil {
		return m, nil
	}
	if o.NodeMap != "" {
		return nil, &UsageError{Err: err}
	}
	fmt.Fprintf(errOut, "%s: warning: %v; not using it\n", tool, err)
	return nil, nil
}

// LazyRegexp is a regexp compiled on its first Get, so that tools that
// never use it do not pay for it at start-up. Declare it as a pointer to
// a literal, &LazyRegexp{Expr: ...}: the compiler lays that out as data,
// where a constructor's result would be allocated by the package's init.
type LazyRegexp struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled regexp, compiling it on the first call.
func (l *LazyRegexp) Get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.Expr) })
	return l.re
}
