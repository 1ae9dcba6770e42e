package exporter

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/nodemap"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// testFabric is a switch (GUID 0x200, LID 1) whose ports 1 and 2 go to
// the two ports of a CA (node GUID 0x100, ports 0x101 and 0x102 at LIDs 2
// and 3); port 2's link trained at 1x SDR of 4x EDR.
func testFabric() *subnet.Fabric {
	sw := &subnet.Node{GUID: 0x200, Type: mad.NodeTypeSwitch, NumPorts: 4, SMALID: 1, Desc: "leaf \"1\""}
	sw.Info.PortGUID = 0x200
	ca := &subnet.Node{GUID: 0x100, Type: mad.NodeTypeCA, NumPorts: 2, Desc: "host1 HCA-1"}
	sw.Ports = make([]*subnet.Port, 5)
	ca.Ports = make([]*subnet.Port, 3)
	edr := func(width mad.LinkWidth, speed mad.LinkSpeed, ext mad.LinkSpeedExt) *mad.PortInfo {
		return &mad.PortInfo{CapabilityMask: mad.PortCapIsExtendedSpeedsSupported, LinkState: mad.PortStateActive, PhysLinkState: mad.PhysPortStateLinkUp,
			LinkWidthActive: width, LinkWidthEnabled: 3, LinkWidthSupported: 3,
			LinkSpeedActive: speed, LinkSpeedEnabled: 7, LinkSpeedSupported: 7,
			LinkSpeedExtActive: ext, LinkSpeedExtEnabled: 3, LinkSpeedExtSupported: 3}
	}
	sw.Ports[0] = &subnet.Port{Node: sw, Num: 0, GUID: 0x200, BaseLID: 1, Info: edr(mad.LinkWidth4X, mad.LinkSpeedQDR, 0)}
	for num := 1; num <= 2; num++ {
		s := &subnet.Port{Node: sw, Num: num, GUID: 0x200, BaseLID: 1, Info: edr(mad.LinkWidth4X, mad.LinkSpeedQDR, mad.LinkSpeedExtEDR)}
		c := &subnet.Port{Node: ca, Num: num, GUID: rdma.GUID(0x100 + num), BaseLID: rdma.LID(1 + num), Info: edr(mad.LinkWidth4X, mad.LinkSpeedQDR, mad.LinkSpeedExtEDR)}
		if num == 2 {
			s.Info = edr(mad.LinkWidth1X, mad.LinkSpeedSDR, 0)
			c.Info = edr(mad.LinkWidth1X, mad.LinkSpeedSDR, 0)
		}
		s.Remote, c.Remote = c, s
		sw.Ports[num], ca.Ports[num] = s, c
	}
	sw.Ports[3] = &subnet.Port{Node: sw, Num: 3, GUID: 0x200, BaseLID: 1} // no link
	return &subnet.Fabric{Nodes: []*subnet.Node{sw, ca}}
}

// testScrape collects testFabric once with the collectors asked for: the
// switch's PMA has 64-bit counters, the CA's 32-bit ones with port 2's
// SymbolErrorCounter saturated.
func testScrape(t *testing.T, switches, cas bool) (*Metrics, Summary) {
	t.Helper()
	wide := mad.PMACapabilities{Mask: mad.PMAExtendedWidth | mad.PMAXmitWait, Mask2: mad.PMAAdditionalPortCounters}
	fab := &fakeFabric{pmas: map[rdma.LID]*fakePMA{
		1: {caps: wide, pce: map[int]mad.PortCountersExtended{1: {PortXmitData: 1 << 40, PortXmitWait: 12}, 2: {LinkDownedCounter: 3}}},
		2: {pc: map[int]mad.PortCounters{1: {PortRcvData: 25}}},
		3: {pc: map[int]mad.PortCounters{2: {SymbolErrorCounter: 0xffff}}},
	}}
	x := newFakeTransactor(fab, time.Second)
	t.Cleanup(func() { x.Close() })
	names, err := nodemap.Parse(strings.NewReader("0x200 \"leaf01\"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	topo := NewTopology(testFabric(), names)
	st := DiscoveryStatus{Duration: 1500 * time.Millisecond}
	c := &Collector{Switch: switches, HCA: cas, Topology: func() (*Topology, DiscoveryStatus) { return topo, st },
		Sweeper: &Sweeper{X: x}, Now: func() time.Time { return time.Unix(1700000000, 0) }}
	return c.Scrape(context.Background())
}

func TestCollect(t *testing.T) {
	tests := []struct {
		name             string
		switches, cas    bool
		want, wantAbsent []string
	}{
		{
			name: "switches", switches: true,
			want: []string{
				`infiniband_switch_info{guid="0x0000000000000200",lid="1",switch="leaf01"} 1`,
				`infiniband_switch_port_transmit_data_bytes_total{guid="0x0000000000000200",port="1"} 4.398046511104e+12`,
				`infiniband_switch_port_transmit_wait_total{guid="0x0000000000000200",port="1"} 12`,
				`infiniband_switch_port_link_downed_total{guid="0x0000000000000200",port="2"} 3`,
				`infiniband_switch_port_rate_bytes_per_second{guid="0x0000000000000200",port="1"} 1.25e+10`,
				`infiniband_switch_port_raw_rate_bytes_per_second{guid="0x0000000000000200",port="1"} 1.2890625e+10`,
				`infiniband_switch_uplink_info{guid="0x0000000000000200",port="2",switch="leaf01",uplink="host1 HCA-1",uplink_guid="0x0000000000000102",uplink_lid="3",uplink_port="2",uplink_type="CA"} 1`,
				`infiniband_switch_collect_error{collector="switch",guid="0x0000000000000200"} 0`,
				`infiniband_exporter_collect_errors{collector="switch"} 0`,
				`infiniband_exporter_collector_duration_seconds{collector="ibnetdiscover"} 1.5`,
				`infiniband_port_info{description="leaf \"1\"",guid="0x0000000000000200",lid="1",name="leaf01",node_guid="0x0000000000000200",port="1",type="SW"} 1`,
				`infiniband_port_link_state{guid="0x0000000000000200",port="1"} 4`,
				`infiniband_port_physical_state{guid="0x0000000000000200",port="1"} 5`,
				`infiniband_port_link_width_active_lanes{guid="0x0000000000000200",port="2"} 1`,
				`infiniband_port_link_width_enabled_lanes{guid="0x0000000000000200",port="2"} 4`,
				`infiniband_port_link_speed_active_bytes_per_second{guid="0x0000000000000200",port="2"} 3.125e+08`,
				`infiniband_port_link_speed_enabled_bytes_per_second{guid="0x0000000000000200",port="2"} 3.22265625e+09`,
			},
			wantAbsent: []string{"infiniband_hca_", `port="3"`, "infiniband_exporter_last_execution", "infiniband_port_counter_saturated"},
		},
		{
			name: "CAs", cas: true,
			want: []string{
				`infiniband_hca_info{guid="0x0000000000000101",hca="host1 HCA-1",lid="2"} 1`,
				`infiniband_hca_info{guid="0x0000000000000102",hca="host1 HCA-1",lid="3"} 1`,
				`infiniband_hca_port_receive_data_bytes_total{guid="0x0000000000000101",port="1"} 100`,
				`infiniband_hca_port_symbol_error_total{guid="0x0000000000000102",port="2"} 65535`,
				`infiniband_port_counter_saturated{counter="SymbolErrorCounter",guid="0x0000000000000102",port="2"} 1`,
				`infiniband_hca_rate_bytes_per_second{guid="0x0000000000000102"} 2.5e+08`,
				`infiniband_hca_uplink_info{guid="0x0000000000000101",hca="host1 HCA-1",port="1",uplink="leaf01",uplink_guid="0x0000000000000200",uplink_lid="1",uplink_port="1",uplink_type="SW"} 1`,
				`infiniband_exporter_collect_errors{collector="hca"} 0`,
			},
			// 32-bit PMA without XmitWait, QP1Dropped or extended counters.
			wantAbsent: []string{"infiniband_switch_", "infiniband_hca_port_transmit_wait_total", "infiniband_hca_port_unicast", "infiniband_hca_port_qp1_dropped_total"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, sum := testScrape(t, tt.switches, tt.cas)
			if sum.Errors != 0 || sum.Timeouts != 0 {
				t.Errorf("summary %+v, want no errors", sum)
			}
			var b bytes.Buffer
			if _, err := m.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			for _, w := range tt.want {
				if !slicesContains(lines, w) {
					t.Errorf("missing %s", w)
				}
			}
			for _, a := range tt.wantAbsent {
				if strings.Contains(b.String(), a) {
					t.Errorf("unexpected %s", a)
				}
			}
			if t.Failed() {
				t.Logf("scrape:\n%s", b.String())
			}
		})
	}
}

func slicesContains(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

func TestScrapeDeadline(t *testing.T) {
	tests := []struct {
		header string
		max    time.Duration
		want   time.Duration
	}{
		{"", time.Minute, time.Minute},
		{"10", time.Minute, 9500 * time.Millisecond},
		{"2.5", time.Minute, 2250 * time.Millisecond},
		{"600", time.Minute, time.Minute},
		{"junk", time.Minute, time.Minute},
		{"-1", time.Minute, time.Minute},
	}
	for _, tt := range tests {
		if got := ScrapeDeadline(tt.header, tt.max); got != tt.want {
			t.Errorf("ScrapeDeadline(%q, %v) = %v, want %v", tt.header, tt.max, got, tt.want)
		}
	}
}

func TestLanes(t *testing.T) {
	got := []int{lanes(0), lanes(1), lanes(2), lanes(4), lanes(8), lanes(16), lanes(3), lanes(32), widestLanes(3), widestLanes(0x1b)}
	if diff := cmp.Diff([]int{0, 1, 4, 8, 12, 2, 0, 0, 4, 12}, got); diff != "" {
		t.Errorf("unexpected lanes (-want +got):\n%s", diff)
	}
}
