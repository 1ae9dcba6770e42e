package perf

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// TestNetCheckRun runs the fabric-wide scripts on fakeNetCheck's topology
// (Hca1 on port 1 of Switch1) against dryRunFabric, whose every port is
// Active 4X and whose PMAs count 5 symbol errors.
func TestNetCheckRun(t *testing.T) {
	tests := []struct {
		tool     string
		args     []string
		want     string
		wantCode int
	}{
		{"ibcheckerrors", []string{"-N"}, "\n*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked, 0 ports have errors beyond threshold\n", 0},
		{"ibcheckstate", []string{"-N"}, "\n*** WARNING ***: this command is deprecated\n\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked, 0 ports with bad state found\n", 0},
		// The script's warning lacks its closing quote.
		{"ibdatacounters", []string{"-N"}, "# Port counters: Lid 1 port 255 (CapMask: 0x1100)\n" +
			"PortRcvData:.........................0\nPortRcvPkts:.........................0\n" +
			"# Port counters: Lid 2 port 1 (CapMask: 0x1100)\n" +
			"PortRcvData:.........................0\nPortRcvPkts:.........................0\n" +
			"*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors --counters\n\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked\n", 0},
		{"ibchecknet", []string{"-N"}, "\n# Checking Ca: nodeguid 0x0000000000100000\n\n" +
			"*** WARNING ***: this command is deprecated; Please use \"ibqueryerrors\"\n" +
			"## Summary: 2 nodes checked, 0 bad nodes found\n##          2 ports checked, 0 bad ports found\n" +
			"##          0 ports have errors beyond threshold\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ff := &cmdtest.DryRunFabric{}
			var out bytes.Buffer
			o := fakeNetCheck(t, tt.tool, tt.args)
			o.IO.Out = &out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, &out), nil, nil }
			checkScriptResult(t, netCheckRun(o), tt.wantCode, tt.want, out.String())
			if ff.Changes != 0 {
				t.Errorf("%d Sets sent by a check", ff.Changes)
			}
		})
	}
}

// fakeNetCheck parses a fabric-wide script's arguments and gives it a
// topology of the fake: Hca1 on port 1 of switch LID 1.
func fakeNetCheck(t *testing.T, name string, args []string) *netCheckOptions {
	t.Helper()
	var tool netCheckTool
	for _, nt := range netCheckTools {
		if nt.name == name {
			tool = nt
		}
	}
	o := cmdtest.ParsedOptions(t, name, func(f *cmdutil.Factory, runF func(*netCheckOptions) error) *cobra.Command {
		return newNetCheckCmd(f, tool, runF)
	}, args)
	o.Topology = func() ([]topoItem, error) {
		return topoItems([]byte(`Switch	8 "S-0000000000200000"		# "Switch1" base port 0 lid 1 lmc 0
[1]	"H-0000000000100000"[1](100001) 		# "Hca1" lid 2 4xSDR

Ca	2 "H-0000000000100000"		# "Hca1"
[1](100001) 	"S-0000000000200000"[1]		# lid 2 lmc 0 "Switch1" lid 1 4xSDR
`)), nil
	}
	return o
}

// TestFabricItems: the lines made from a discovered fabric are those the
// scripts' rules read from ibnetdiscover's text of the same fabric, on
// ibsim's two-switch example with a link down and an HCA with an LMC.
func TestFabricItems(t *testing.T) {
	data, err := os.ReadFile("../../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := subnettest.FromNet(string(data), "Hca1")
	if err != nil {
		t.Fatal(err)
	}
	ff.Node("Hca2").Ports[1].Down = true
	ff.Node("Hca3").Ports[1].LMC = 1
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: 1})
	t.Cleanup(func() { x.Close() })
	fab, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []topoItem
	for _, it := range topoItems(subnet.TopologyText(fab, false, time.Time{})) {
		if it.kind != topoOther {
			it.line = ""
			want = append(want, it)
		}
	}
	got := fabricItems(fab)
	if len(got) < 8 {
		t.Fatalf("only %d items: %+v", len(got), got)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(topoItem{})); diff != "" {
		t.Errorf("unexpected items (-want +got):\n%s", diff)
	}
}
