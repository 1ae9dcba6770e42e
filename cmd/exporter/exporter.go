package exporter

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/common/promslog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/exporter"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// Tool is the exporter's registry entry, which ibtool-exporter's main
// registers (Main). The ibtool binary's "exporter" runs ibtool-exporter
// (cmd/exporterexec).
var Tool = cmdutil.Tool{
	Name:        "ibtool-exporter",
	Summary:     "serve the fabric's port counters as Prometheus metrics (infiniband_exporter's)",
	New:         func(f *cmdutil.Factory) *cobra.Command { return newExporterCmd(f, nil) },
	SignalIsEnd: true,
}

// Main runs the exporter with args (the arguments after the program's
// name) and returns the exit code: ibtool-exporter's main.
func Main(args []string, f *cmdutil.Factory) int {
	cmdutil.Register(Tool)
	return cmdutil.RunTool(append([]string{Tool.Name}, args...), f)
}

// exporterOptions are the exporter's parsed flags.
type exporterOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	Version   string
	Web       webOptions
	// Switch and HCA are --collector.switch and --collector.hca;
	// SwitchBase and HCABase their .base-metrics.
	Switch, HCA         bool
	SwitchBase, HCABase bool
	// SwitchRcvErr and HCARcvErr are their .rcv-err-details.
	SwitchRcvErr, HCARcvErr bool
	// RunOnce, Output and LockFile are --exporter.runonce,
	// --exporter.output and --exporter.lockfile.
	RunOnce  bool
	Output   string
	LockFile string
	// RefreshInterval is --topology.refresh-interval.
	RefreshInterval time.Duration
	// DiscoveryTimeout is --ibnetdiscover.timeout: the longest one
	// discovery of the fabric runs.
	DiscoveryTimeout time.Duration
	// ScrapeTimeout is --exporter.scrape-timeout: the longest a scrape
	// sweeps when Prometheus does not say how long it waits.
	ScrapeTimeout time.Duration
	// LogLevel and LogFormat are --log.level and --log.format.
	LogLevel, LogFormat string
	// Ignored are the flags given that infiniband_exporter has and
	// ibtool has no use for (ignoredFlags).
	Ignored []string
	// Discover walks the fabric (tests replace it).
	Discover func(ctx context.Context) (*subnet.Fabric, error)
}

// retryInterval is how soon a failed discovery is tried again.
const retryInterval = 30 * time.Second

func newExporterCmd(f *cmdutil.Factory, runF func(*exporterOptions) error) *cobra.Command {
	o := &exporterOptions{IO: f.IO, Version: f.Version}
	c := &cobra.Command{
		Use:   "ibtool-exporter [options]",
		Short: "serve the fabric's port counters as Prometheus metrics (infiniband_exporter's)",
		Long: `ibtool-exporter ("ibtool exporter") discovers the fabric and serves its
ports' counters on /metrics under treydock/infiniband_exporter's metric
names, types and labels, plus link state, width and speed, 64-bit counters
where the PMA has them and the counters that saturated (docs/exporter.md
lists them all). The topology is discovered at start and again every
--topology.refresh-interval; each scrape is one parallel PerfMgt sweep of
every port, shared by scrapes that overlap, and ends at Prometheus' scrape
timeout (X-Prometheus-Scrape-Timeout-Seconds): what did not answer by then
is left out and counted in infiniband_exporter_collect_timeouts.

It serves through client_golang's promhttp (gzip, OpenMetrics) and
exporter-toolkit's web server: --web.config.file enables TLS, client
certificates and basic auth. It takes every flag of infiniband_exporter
0.10.0; those that name its helper programs are accepted and ignored.

With --exporter.runonce it sweeps once and writes the metrics to
--exporter.output (standard output without it); it exits 3 when some
device did not answer, after writing what the others said.`,
		Example: `  ibtool-exporter
  ibtool-exporter --web.listen-address :9315 --collector.hca --discovery sa
  ibtool-exporter --web.config.file /etc/ibtool-exporter/web.yml
  ibtool-exporter --exporter.runonce --exporter.output /var/lib/node_exporter/ib.prom`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if err := o.finish(c.Flags()); err != nil {
				return err
			}
			o.Discover = func(ctx context.Context) (*subnet.Fabric, error) {
				common, d := o.Common, o.Discovery
				common.Ctx = ctx
				return f.DiscoverFabric("exporter", &common, &d, nil)
			}
			if runF != nil {
				return runF(o)
			}
			return exporterRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsNodeMap)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	o.Web.addFlags(fl)
	fl.BoolVar(&o.Switch, "collector.switch", true, "report the switches' ports")
	fl.BoolVar(&o.SwitchBase, "collector.switch.base-metrics", true, "report the switches' port counters")
	fl.BoolVar(&o.HCA, "collector.hca", false, "report the CAs' ports")
	fl.BoolVar(&o.HCABase, "collector.hca.base-metrics", true, "report the CAs' port counters")
	fl.BoolVar(&o.SwitchRcvErr, "collector.switch.rcv-err-details", false, "read and report the switches' PortRcvErrorDetails too")
	fl.BoolVar(&o.HCARcvErr, "collector.hca.rcv-err-details", false, "read and report the CAs' PortRcvErrorDetails too")
	fl.BoolVar(&o.RunOnce, "exporter.runonce", false, "sweep once, write the metrics and exit")
	fl.StringVar(&o.Output, "exporter.output", "", "file --exporter.runonce writes the metrics to (default standard output)")
	fl.StringVar(&o.LockFile, "exporter.lockfile", "/tmp/infiniband_exporter.lock", "lock file that keeps two --exporter.runonce from running at once")
	fl.StringVar(&o.Common.NodeMap, "ibnetdiscover.node-name-map", "", "node name map file (same as --node-name-map)")
	fl.DurationVar(&o.DiscoveryTimeout, "ibnetdiscover.timeout", 20*time.Second, "longest one discovery of the fabric runs")
	fl.DurationVar(&o.RefreshInterval, "topology.refresh-interval", 5*time.Minute, "time between discoveries of the fabric")
	fl.DurationVar(&o.ScrapeTimeout, "exporter.scrape-timeout", exporter.DefaultTimeout, "longest sweep of a scrape that names no timeout (X-Prometheus-Scrape-Timeout-Seconds)")
	fl.StringVar(&o.LogLevel, "log.level", "info", "only log messages of this severity or above: debug, info, warn, error")
	fl.StringVar(&o.LogFormat, "log.format", "logfmt", "log format of the web server's messages: logfmt or json")
	addIgnoredFlags(fl)
	return c
}

// finish checks the exporter's own flags.
func (o *exporterOptions) finish(fl *pflag.FlagSet) error {
	if o.Output != "" && !o.RunOnce {
		return cmdutil.UsageErrorf("--exporter.output writes --exporter.runonce's metrics; give --exporter.runonce too")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"topology.refresh-interval", o.RefreshInterval}, {"exporter.scrape-timeout", o.ScrapeTimeout}, {"ibnetdiscover.timeout", o.DiscoveryTimeout}} {
		if d.v <= 0 {
			return cmdutil.UsageErrorf("invalid --%s %v: want more than 0", d.name, d.v)
		}
	}
	if err := promslog.NewLevel().Set(o.LogLevel); err != nil {
		return cmdutil.UsageErrorf("invalid --log.level %q: want debug, info, warn or error", o.LogLevel)
	}
	if err := promslog.NewFormat().Set(o.LogFormat); err != nil {
		return cmdutil.UsageErrorf("invalid --log.format %q: want logfmt or json", o.LogFormat)
	}
	if err := o.Web.finish(); err != nil {
		return err
	}
	o.Ignored = ignoredGiven(fl)
	return nil
}

// slogger returns the logger of the web server's messages, at
// --log.level in --log.format, on standard error.
func (o *exporterOptions) slogger() *slog.Logger {
	lvl, format := promslog.NewLevel(), promslog.NewFormat()
	_ = lvl.Set(o.LogLevel) // checked by finish
	_ = format.Set(o.LogFormat)
	return promslog.New(&promslog.Config{Level: lvl, Format: format, Writer: o.IO.ErrOut})
}

// logger writes the exporter's lines to standard error, one at a time.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "exporter: "+format+"\n", a...)
}

func exporterRun(o *exporterOptions) error {
	log := &logger{w: o.IO.ErrOut}
	for _, name := range o.Ignored {
		log.printf("--%s is infiniband_exporter's and has no use here (ibtool reads the fabric itself): ignored", name)
	}
	if o.RunOnce && o.LockFile != "" {
		unlock, err := lockFile(o.LockFile)
		if err != nil {
			return err
		}
		defer unlock()
	}
	names, err := o.Common.LoadNodeMap("exporter", o.IO.ErrOut)
	if err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	sweeper := &exporter.Sweeper{X: x, Base: ctx, SwitchRcvErrDetails: o.SwitchRcvErr, HCARcvErrDetails: o.HCARcvErr}
	var pre *exporter.Prefetch
	if o.RunOnce {
		// One discovery and one sweep: the sweep reads each device
		// the walk finds while the walk goes on.
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		pre = sweeper.Prefetch(pctx, o.Switch, o.HCA)
		o.Discovery.PortsRead = pre.PortsRead
	}
	discover := func(ctx context.Context) (*subnet.Fabric, error) {
		ctx, cancel := context.WithTimeout(ctx, o.DiscoveryTimeout)
		defer cancel()
		if pre != nil {
			defer pre.Close()
		}
		return o.Discover(ctx)
	}
	ref := &exporter.Refresher{Discover: discover, Names: names, Interval: o.RefreshInterval,
		RetryInterval: min(retryInterval, o.RefreshInterval), Log: log.printf}
	discErr := ref.Refresh(ctx)
	coll := &exporter.Collector{Switch: o.Switch, HCA: o.HCA, NoSwitchCounters: !o.SwitchBase, NoHCACounters: !o.HCABase,
		RunOnce: o.RunOnce, Topology: ref.Current, Sweeper: sweeper, Timeout: o.ScrapeTimeout}
	if o.RunOnce {
		if discErr != nil {
			return cmdutil.WithContext(discErr, "discovery")
		}
		return runOnce(ctx, o, coll, log)
	}
	return serve(ctx, o, coll, ref, discErr, log)
}

// runOnce sweeps once and writes the metrics.
func runOnce(ctx context.Context, o *exporterOptions, coll *exporter.Collector, log *logger) error {
	m, sum := coll.Scrape(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeOutput(o, m); err != nil {
		return err
	}
	for _, r := range sum.Failed {
		log.printf("%s %s (%q) LID %d: %v", typeName(r.Device), r.Device.GUID, r.Device.Name, r.Device.LID, r.Err)
	}
	if n := len(sum.Failed); n > 0 {
		return fmt.Errorf("%d of %d devices did not answer; the metrics are partial", n, sum.Devices)
	}
	return nil
}

func typeName(d *exporter.Device) string {
	if d.Type == mad.NodeTypeSwitch {
		return "switch"
	}
	return "CA port"
}

// writeOutput writes the metrics to --exporter.output, through a
// temporary file renamed over it (a textfile collector never reads half a
// file), or to standard output.
func writeOutput(o *exporterOptions, m *exporter.Metrics) error {
	if o.Output == "" {
		_, err := m.WriteTo(o.IO.Out)
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.Output), "."+filepath.Base(o.Output)+".")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := m.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), o.Output)
}
