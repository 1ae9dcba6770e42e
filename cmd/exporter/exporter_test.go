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
		Listen          string
		Switch, HCA     bool
		RunOnce         bool
		Output, NodeMap string
		Refresh         time.Duration
		Mode            string
	}
	tests := []struct {
		args    []string
		want    parsed
		wantErr bool
	}{
		{args: nil, want: parsed{Listen: ":9315", Switch: true, Refresh: 5 * time.Minute, Mode: "dr"}},
		{
			args: []string{"--web.listen-address", "127.0.0.1:9999", "--collector.switch=false", "--collector.hca",
				"--exporter.runonce", "--exporter.output", "/tmp/ib.prom", "--ibnetdiscover.node-name-map", "/etc/map",
				"--topology.refresh-interval", "30s", "--discovery", "SA"},
			want: parsed{Listen: "127.0.0.1:9999", HCA: true, RunOnce: true, Output: "/tmp/ib.prom", NodeMap: "/etc/map", Refresh: 30 * time.Second, Mode: "sa"},
		},
		{args: []string{"--node-name-map", "/etc/map2"}, want: parsed{Listen: ":9315", Switch: true, NodeMap: "/etc/map2", Refresh: 5 * time.Minute, Mode: "dr"}},
		{args: []string{"--exporter.output", "/tmp/x"}, wantErr: true},
		{args: []string{"--topology.refresh-interval", "0s"}, wantErr: true},
		{args: []string{"--discovery", "smp"}, wantErr: true},
		{args: []string{"extra"}, wantErr: true},
	}
	for _, tt := range tests {
		var got *exporterOptions
		err := cmdtest.ParseToolArgs(t, "exporter", func(f *cmdutil.Factory) *cobra.Command {
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
		p := parsed{got.ListenAddress, got.Switch, got.HCA, got.RunOnce, got.Output, got.Common.NodeMap, got.RefreshInterval, got.Discovery.Mode}
		if diff := cmp.Diff(tt.want, p); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
}
