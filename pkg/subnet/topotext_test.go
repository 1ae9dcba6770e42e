package subnet_test

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// generated is the date the tests' topology headers give.
var generated = time.Date(2026, 11, 3, 8, 4, 5, 0, time.UTC)

// twoSwitchFabric discovers net.2sw2path4hca from Hca1, after hurt (if
// any) changed the fake.
func twoSwitchFabric(t *testing.T, hurt func(*subnettest.Fabric)) *subnet.Fabric {
	t.Helper()
	ff := twoSwitches(t, "Hca1")
	if hurt != nil {
		hurt(ff)
	}
	return discover(t, ff, subnet.Options{})
}

// topologyOutput returns what write writes with a TopologyWriter of fab.
func topologyOutput(t *testing.T, fab *subnet.Fabric, write func(*subnet.TopologyWriter)) string {
	t.Helper()
	var b strings.Builder
	w := bufio.NewWriter(&b)
	write(&subnet.TopologyWriter{W: w, Fabric: fab})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTopologyWriterLists renders the two-switch fabric's node lists and
// ports report; the whole dump is e2e's (Ibnetdiscover).
func TestTopologyWriterLists(t *testing.T) {
	fab := twoSwitchFabric(t, nil)
	tests := []struct {
		name  string
		write func(*subnet.TopologyWriter)
		want  string
	}{
		{"switches", func(w *subnet.TopologyWriter) { w.List([]mad.NodeType{mad.NodeTypeSwitch}) },
			`Switch	 : 0x0000000000200001 ports 8 devid 0x0 vendid 0x0 "Switch2"
Switch	 : 0x0000000000200000 ports 8 devid 0x0 vendid 0x0 "Switch1"
`},
		{"cas", func(w *subnet.TopologyWriter) { w.List([]mad.NodeType{mad.NodeTypeCA}) },
			`Ca	 : 0x0000000000100009 ports 2 devid 0x0 vendid 0x0 "Hca4"
Ca	 : 0x0000000000100003 ports 2 devid 0x0 vendid 0x0 "Hca2"
Ca	 : 0x0000000000100006 ports 2 devid 0x0 vendid 0x0 "Hca3"
Ca	 : 0x0000000000100000 ports 2 devid 0x0 vendid 0x0 "Hca1"
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, topologyOutput(t, fab, tt.write)); diff != "" {
				t.Errorf("unexpected list (-want +got):\n%s", diff)
			}
		})
	}
	ports := topologyOutput(t, fab, (*subnet.TopologyWriter).Ports)
	wantPorts := "SW     2  3 0x0000000000200001 4x SDR - SW     1  3 0x0000000000200000 ( 'Switch2' - 'Switch1' )\n"
	if !strings.Contains(ports, wantPorts) {
		t.Errorf("ports report lacks %q:\n%s", wantPorts, ports)
	}
}

// TestTopologyTextHeader checks the header TopologyText starts with.
func TestTopologyTextHeader(t *testing.T) {
	got := string(subnet.TopologyText(twoSwitchFabric(t, nil), false, generated))
	want := "#\n# Topology file: generated on Tue Nov  3 08:04:05 2026\n#\n# Initiated from node 0000000000100000 port 0000000000100001\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("unexpected header (-want +got):\n%s", cmp.Diff(want, got[:min(len(got), len(want))]))
	}
}
