package exporter

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

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/httpd"
	"github.com/ibtool/ibtool/pkg/exporter"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:        "exporter",
		Summary:     "serve the fabric's port counters as Prometheus metrics (infiniband_exporter's)",
		New:         func(f *cmdutil.Factory) *cobra.Command { return newExporterCmd(f, nil) },
		SignalIsEnd: true,
	})
}

// exporterOptions are the exporter's parsed flags.
type exporterOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	// ListenAddress is --web.listen-address.
	ListenAddress string
	// Switch and HCA are --collector.switch and --collector.hca.
	Switch, HCA bool
	// RunOnce and Output are --exporter.runonce and --exporter.output.
	RunOnce bool
	Output  string
	// RefreshInterval is --topology.refresh-interval.
	RefreshInterval time.Duration
	// ScrapeTimeout is --exporter.scrape-timeout: the longest a scrape
	// sweeps when Prometheus does not say how long it waits.
	ScrapeTimeout time.Duration
	// Discover walks the fabric; Listen opens the listening socket
	// (tests replace both).
	Discover func(ctx context.Context) (*subnet.Fabric, error)
	Listen   func(addr string) (net.Listener, error)
	// Ready, when set, is told the address the server listens on.
	Ready func(addr net.Addr)
}

// retryInterval is how soon a failed discovery is tried again.
const retryInterval = 30 * time.Second

func newExporterCmd(f *cmdutil.Factory, runF func(*exporterOptions) error) *cobra.Command {
	o := &exporterOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "exporter [options]",
		Short: "serve the fabric's port counters as Prometheus metrics (infiniband_exporter's)",
		Long: `exporter discovers the fabric and serves its ports' counters on /metrics
under treydock/infiniband_exporter's metric names, types and labels, plus
link state, width and speed, 64-bit counters where the PMA has them and
the counters that saturated (docs/exporter.md lists them all). The
topology is discovered at start and again every --topology.refresh-interval;
each scrape is one parallel PerfMgt sweep of every port, shared by
scrapes that overlap, and ends at Prometheus' scrape timeout
(X-Prometheus-Scrape-Timeout-Seconds): what did not answer by then is left
out and counted in infiniband_exporter_collect_timeouts. With
--exporter.runonce it sweeps once and writes the metrics to
--exporter.output (standard output without it); it exits 3 when some
device did not answer, after writing what the others said.`,
		Example: `  ibtool exporter
  ibtool exporter --web.listen-address :9315 --collector.hca --discovery sa
  ibtool exporter --exporter.runonce --exporter.output /var/lib/node_exporter/ib.prom`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			if o.Output != "" && !o.RunOnce {
				return cmdutil.UsageErrorf("--exporter.output writes --exporter.runonce's metrics; give --exporter.runonce too")
			}
			if o.RefreshInterval <= 0 {
				return cmdutil.UsageErrorf("invalid --topology.refresh-interval %v: want more than 0", o.RefreshInterval)
			}
			if o.ScrapeTimeout <= 0 {
				return cmdutil.UsageErrorf("invalid --exporter.scrape-timeout %v: want more than 0", o.ScrapeTimeout)
			}
			o.Discover = func(ctx context.Context) (*subnet.Fabric, error) {
				d := o.Discovery
				return f.DiscoverFabric("exporter", &o.Common, &d, nil)
			}
			o.Listen = func(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
			if runF != nil {
				return runF(o)
			}
			return exporterRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsNodeMap)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.StringVar(&o.ListenAddress, "web.listen-address", ":9315", "address to serve the metrics on (/metrics)")
	fl.BoolVar(&o.Switch, "collector.switch", true, "report the switches' ports")
	fl.BoolVar(&o.HCA, "collector.hca", false, "report the CAs' ports")
	fl.BoolVar(&o.RunOnce, "exporter.runonce", false, "sweep once, write the metrics and exit")
	fl.StringVar(&o.Output, "exporter.output", "", "file --exporter.runonce writes the metrics to (default standard output)")
	fl.StringVar(&o.Common.NodeMap, "ibnetdiscover.node-name-map", "", "node name map file (same as --node-name-map)")
	fl.DurationVar(&o.RefreshInterval, "topology.refresh-interval", 5*time.Minute, "time between discoveries of the fabric")
	fl.DurationVar(&o.ScrapeTimeout, "exporter.scrape-timeout", 2*time.Minute, "longest sweep of a scrape that names no timeout (X-Prometheus-Scrape-Timeout-Seconds)")
	return c
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
	names, err := o.Common.LoadNodeMap("exporter", o.IO.ErrOut)
	if err != nil {
		return err
	}
	x, err := o.Common.Transactor()
	if err != nil {
		return err
	}
	ctx := o.Common.Context()
	log := &logger{w: o.IO.ErrOut}
	ref := &exporter.Refresher{Discover: o.Discover, Names: names, Interval: o.RefreshInterval,
		RetryInterval: min(retryInterval, o.RefreshInterval), Log: log.printf}
	discErr := ref.Refresh(ctx)
	coll := &exporter.Collector{Switch: o.Switch, HCA: o.HCA, RunOnce: o.RunOnce, Topology: ref.Current,
		Sweeper: &exporter.Sweeper{X: x, Base: ctx}}
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
	m, sum := coll.Collect(ctx)
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

const indexPage = `<html>
<head><title>InfiniBand Exporter</title></head>
<body>
<h1>InfiniBand Exporter (ibtool)</h1>
<p><a href="/metrics">Metrics</a></p>
</body>
</html>
`

// serve serves /metrics until ctx ends, refreshing the topology in the
// background.
func serve(ctx context.Context, o *exporterOptions, coll *exporter.Collector, ref *exporter.Refresher, discErr error, log *logger) error {
	ln, err := o.Listen(o.ListenAddress)
	if err != nil {
		return err
	}
	go ref.Run(ctx, discErr)
	metrics := coll.Handler(o.ScrapeTimeout, func(sum exporter.Summary) {
		if n := len(sum.Failed); n > 0 {
			r := sum.Failed[0]
			log.printf("scrape: %d of %d devices did not answer (%d errors, %d timeouts); first: %s %s: %v",
				n, sum.Devices, sum.Errors, sum.Timeouts, typeName(r.Device), r.Device.GUID, r.Err)
		}
	})
	srv := &httpd.Server{Handler: func(w *httpd.Response, r *httpd.Request) {
		switch r.Path {
		case "/metrics":
			metrics(w, r)
		case "/":
			w.Header.Set("Content-Type", "text/html; charset=utf-8")
			w.WriteString(indexPage)
		default:
			httpd.Error(w, "404 page not found", httpd.StatusNotFound)
		}
	}}
	log.printf("listening on %s", ln.Addr())
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		if err := <-done; err != nil && !errors.Is(err, httpd.ErrServerClosed) {
			return err
		}
		return nil
	}
}
