package exporter

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

func TestExporterArgs(t *testing.T) {
	type parsed struct {
		Listen          []string
		Switch, HCA     bool
		RunOnce         bool
		Output, NodeMap string
		Refresh         time.Duration
		Mode            string
		Web             webOptions
		SwitchBase      bool
		HCABase         bool
		LockFile        string
		DiscTimeout     time.Duration
		Ignored         []string
		RcvErr          [2]bool
	}
	web := func(addrs ...string) webOptions {
		return webOptions{ListenAddresses: addrs, TelemetryPath: "/metrics"}
	}
	def := parsed{Listen: []string{":9315"}, Switch: true, Refresh: 5 * time.Minute, Mode: "dr", Web: web(":9315"),
		SwitchBase: true, HCABase: true, LockFile: "/tmp/infiniband_exporter.lock", DiscTimeout: 20 * time.Second}
	with := func(f func(p *parsed)) parsed {
		p := def
		f(&p)
		return p
	}
	tests := []struct {
		args    []string
		want    parsed
		wantErr bool
	}{
		{args: nil, want: def},
		{
			args: []string{"--web.listen-address", "127.0.0.1:9999", "--collector.switch=false", "--collector.hca",
				"--exporter.runonce", "--exporter.output", "/tmp/ib.prom", "--ibnetdiscover.node-name-map", "/etc/map",
				"--topology.refresh-interval", "30s", "--discovery", "SA"},
			want: with(func(p *parsed) {
				p.Listen, p.Web = []string{"127.0.0.1:9999"}, web("127.0.0.1:9999")
				p.Switch, p.HCA, p.RunOnce, p.Output, p.NodeMap, p.Refresh, p.Mode = false, true, true, "/tmp/ib.prom", "/etc/map", 30*time.Second, "sa"
			}),
		},
		{args: []string{"--node-name-map", "/etc/map2"}, want: with(func(p *parsed) { p.NodeMap = "/etc/map2" })},
		// exporter-toolkit's flags: --web.listen-address repeated.
		{
			args: []string{"--web.listen-address", ":1", "--web.listen-address", "[::1]:2", "--web.systemd-socket",
				"--web.telemetry-path", "/ib", "--web.disable-exporter-metrics"},
			want: with(func(p *parsed) {
				p.Listen = []string{":1", "[::1]:2"}
				p.Web = webOptions{ListenAddresses: p.Listen, SystemdSocket: true, TelemetryPath: "/ib", DisableExporterMetrics: true}
			}),
		},
		// Every flag of infiniband_exporter 0.10.0 (its systemd unit and
		// Helm values), the ignored ones listed.
		{
			args: []string{"--collector.switch.base-metrics=false", "--collector.hca.base-metrics=false",
				"--collector.switch.rcv-err-details", "--collector.hca.rcv-err-details", "--collector.ibswinfo",
				"--ibswinfo.path", "/x", "--ibswinfo.timeout", "3s", "--ibswinfo.max-concurrent", "4",
				"--perfquery.path", "/usr/sbin/perfquery", "--perfquery.timeout", "10s", "--perfquery.max-concurrent", "8",
				"--ibnetdiscover.path", "/usr/sbin/ibnetdiscover", "--ibnetdiscover.timeout", "1m", "--sudo",
				"--exporter.lockfile", "/run/ib.lock", "--log.level", "debug", "--log.format", "json"},
			want: with(func(p *parsed) {
				p.SwitchBase, p.HCABase, p.LockFile, p.DiscTimeout = false, false, "/run/ib.lock", time.Minute
				p.RcvErr = [2]bool{true, true}
				p.Ignored = []string{"sudo", "ibnetdiscover.path", "perfquery.path", "perfquery.timeout", "perfquery.max-concurrent",
					"collector.ibswinfo",
					"ibswinfo.path", "ibswinfo.timeout", "ibswinfo.max-concurrent"}
			}),
		},
		{args: []string{"--exporter.output", "/tmp/x"}, wantErr: true},
		{args: []string{"--topology.refresh-interval", "0s"}, wantErr: true},
		{args: []string{"--ibnetdiscover.timeout", "0s"}, wantErr: true},
		{args: []string{"--log.level", "loud"}, wantErr: true},
		{args: []string{"--log.format", "xml"}, wantErr: true},
		{args: []string{"--web.telemetry-path", "metrics"}, wantErr: true},
		{args: []string{"--web.config.file", "/nonexistent/web.yml"}, wantErr: true},
		{args: []string{"--discovery", "smp"}, wantErr: true},
		{args: []string{"extra"}, wantErr: true},
	}
	for _, tt := range tests {
		var got *exporterOptions
		err := cmdtest.ParseToolArgs(t, Tool.Name, func(f *cmdutil.Factory) *cobra.Command {
			return newExporterCmd(f, func(o *exporterOptions) error { got = o; return nil })
		}, tt.args)
		if tt.wantErr {
			var u *cmdutil.UsageError
			if !errors.As(err, &u) {
				t.Errorf("%q: error %v, want a usage error", tt.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		p := parsed{got.Web.ListenAddresses, got.Switch, got.HCA, got.RunOnce, got.Output, got.Common.NodeMap, got.RefreshInterval, got.Discovery.Mode,
			got.Web, got.SwitchBase, got.HCABase, got.LockFile, got.DiscoveryTimeout, got.Ignored, [2]bool{got.SwitchRcvErr, got.HCARcvErr}}
		if diff := cmp.Diff(tt.want, p); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
}
