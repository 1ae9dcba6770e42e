package subnet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// twoSwitches is ibsim's net.2sw2path4hca: two switches joined by two
// links, two HCAs on each.
func twoSwitches(t *testing.T, local string) *subnettest.Fabric {
	t.Helper()
	data, err := os.ReadFile("../../internal/simfabric/testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	f, err := subnettest.FromNet(string(data), local)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func discover(t *testing.T, ff *subnettest.Fabric, o subnet.Options) *subnet.Fabric {
	t.Helper()
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 2})
	defer x.Close()
	f, err := subnet.Discover(context.Background(), x, o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func descs(nodes []*subnet.Node) string {
	var s []string
	for _, n := range nodes {
		s = append(s, n.Desc)
	}
	return strings.Join(s, " ")
}

// visits renders Visits as ibnetdiscover -s prints them, without the
// constant prefix.
func visits(t *testing.T, f *subnet.Fabric) string {
	t.Helper()
	out := topologyOutput(t, f, (*subnet.TopologyWriter).Visits)
	return strings.ReplaceAll(out, "DR path slid 0; dlid 0; ", "")
}

// TestDiscoverOrder checks the order against what infiniband-diags 44's
// ibnetdiscover printed on ibsim's net.2sw2path4hca from Hca1.
func TestDiscoverOrder(t *testing.T) {
	ff := twoSwitches(t, "Hca1")
	f := discover(t, ff, subnet.Options{})
	if f.Partial() {
		t.Fatalf("errors: %v", f.Errors)
	}
	if diff := cmp.Diff("Switch2 Switch1", descs(f.ByType(mad.NodeTypeSwitch))); diff != "" {
		t.Errorf("switch order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("Hca4 Hca2 Hca3 Hca1", descs(f.ByType(mad.NodeTypeCA))); diff != "" {
		t.Errorf("CA order (-want +got):\n%s", diff)
	}
	// ibnetdiscover -s, LIDs as the fake numbers them (file order).
	want := `0 -> new Channel Adapter {0000000000100000} portnum 1 lid 0-0 ""
0,1 -> new Switch {0000000000200000} portnum 0 lid 0-0 ""
0,1,2 -> new Channel Adapter {0000000000100006} portnum 1 lid 0-0 ""
0,1,3 -> new Switch {0000000000200001} portnum 0 lid 0-0 ""
0,1,5 -> known Switch {0000000000200001} portnum 0 lid 0-0 ""
0,1,3,1 -> new Channel Adapter {0000000000100003} portnum 1 lid 0-0 ""
0,1,3,2 -> new Channel Adapter {0000000000100009} portnum 1 lid 0-0 ""
0,1,3,5 -> known Switch {0000000000200000} portnum 0 lid 1-1 "Switch1"
`
	if diff := cmp.Diff(want, visits(t, f)); diff != "" {
		t.Errorf("visits (-want +got):\n%s", diff)
	}
	if f.MaxHops != 3 {
		t.Errorf("MaxHops = %d, want 3", f.MaxHops)
	}
	// libibnetdisc sends 38 SMPs here; the walk skips asking Switch1
	// through Switch2's port 5, which it already knows.
	if f.MADs != 37 || ff.Sent() != 37 {
		t.Errorf("MADs = %d (fabric saw %d), want 37", f.MADs, ff.Sent())
	}
	if r := ff.Repeats(); len(r) != 0 {
		t.Errorf("asked more than once: %v", r)
	}
	sw2 := f.NodeByGUID(0x200001)
	if got := subnet.FormatPath(sw2.Path); got != "0,1,3" {
		t.Errorf("Switch2 path = %s, want 0,1,3", got)
	}
	for _, c := range []struct{ a, b string }{{"Switch1:3", "Switch2:3"}, {"Switch1:5", "Switch2:5"}, {"Switch2:1", "Hca2:1"}, {"Switch1:1", "Hca1:1"}} {
		pa, pb := portOf(t, f, c.a), portOf(t, f, c.b)
		if pa.Remote != pb || pb.Remote != pa {
			t.Errorf("%s and %s not linked", c.a, c.b)
		}
	}
	if p := portOf(t, f, "Switch1:4"); p.Remote != nil || p.Info == nil || p.Info.PhysLinkState != 2 {
		t.Errorf("Switch1 port 4: remote %v, info %+v; want unlinked, Polling", p.Remote, p.Info)
	}
	if got := f.PortByLID(ff.Node("Hca3").Ports[1].LID); got == nil || got.Node.Desc != "Hca3" {
		t.Errorf("PortByLID(Hca3's LID) = %v, want Hca3's port", got)
	}
	if got := f.PortByGUID(0x100004); got == nil || got.Node.Desc != "Hca2" || got.Num != 1 {
		t.Errorf("PortByGUID(0x100004) = %v, want Hca2 port 1", got)
	}
}

func portOf(t *testing.T, f *subnet.Fabric, s string) *subnet.Port {
	t.Helper()
	desc, num, _ := strings.Cut(s, ":")
	for _, n := range f.Nodes {
		if n.Desc == desc {
			var i int
			fmt.Sscan(num, &i)
			if p := n.Port(i); p != nil {
				return p
			}
		}
	}
	t.Fatalf("no port %s", s)
	return nil
}

// TestDiscoverFromSwitch starts at a switch's port 0.
func TestDiscoverFromSwitch(t *testing.T) {
	f := discover(t, twoSwitches(t, "Switch2"), subnet.Options{})
	if len(f.Nodes) != 6 || f.Partial() {
		t.Fatalf("%d nodes, errors %v", len(f.Nodes), f.Errors)
	}
	if diff := cmp.Diff("Switch1 Switch2", descs(f.ByType(mad.NodeTypeSwitch))); diff != "" {
		t.Errorf("switch order (-want +got):\n%s", diff)
	}
	if f.From.Desc != "Switch2" || f.FromPort != 0 {
		t.Errorf("from %s port %d", f.From.Desc, f.FromPort)
	}
}

// TestDiscoverFaults: what cannot be reached is reported, the rest is
// right.
func TestDiscoverFaults(t *testing.T) {
	t.Run("dead node", func(t *testing.T) {
		ff := twoSwitches(t, "Hca1")
		ff.Node("Hca4").Dead = true
		f := discover(t, ff, subnet.Options{})
		if len(f.Nodes) != 5 || f.NodeByGUID(ff.Node("Hca4").GUID) != nil {
			t.Fatalf("nodes %s", descs(f.Nodes))
		}
		if len(f.Errors) != 1 {
			t.Fatalf("errors %v, want one", f.Errors)
		}
		e := f.Errors[0]
		var te *madrpc.TimeoutError
		if e.Query != "NodeInfo" || subnet.FormatPath(e.Path) != "0,1,3,2" || e.Node.Desc != "Switch2" || e.Port != 2 || !errors.As(e, &te) {
			t.Errorf("error %v", e)
		}
		if !strings.Contains(e.Error(), `NodeInfo at DR path 0,1,3,2 (0x0000000000200001 "Switch2" port 2): `) {
			t.Errorf("message %q", e.Error())
		}
	})
	t.Run("dead switch", func(t *testing.T) {
		ff := twoSwitches(t, "Hca1")
		ff.Node("Switch2").Dead = true
		f := discover(t, ff, subnet.Options{})
		if diff := cmp.Diff("Hca3 Switch1 Hca1", descs(f.All())); diff != "" {
			t.Errorf("nodes (-want +got):\n%s", diff)
		}
		if len(f.Errors) != 2 {
			t.Errorf("errors %v, want NodeInfo through ports 3 and 5", f.Errors)
		}
	})
	t.Run("dropped SMPs", func(t *testing.T) {
		ff := twoSwitches(t, "Hca1")
		ff.Node("Switch2").DropEvery = 3
		f := discover(t, ff, subnet.Options{})
		if len(f.Nodes) != 6 || f.Partial() {
			t.Fatalf("%d nodes, errors %v", len(f.Nodes), f.Errors)
		}
		if diff := cmp.Diff("Switch2 Switch1", descs(f.ByType(mad.NodeTypeSwitch))); diff != "" {
			t.Errorf("switch order (-want +got):\n%s", diff)
		}
	})
	t.Run("link down", func(t *testing.T) {
		ff := twoSwitches(t, "Hca1")
		ff.Node("Switch1").Ports[3].Down = true
		f := discover(t, ff, subnet.Options{})
		if len(f.Nodes) != 6 || f.Partial() {
			t.Fatalf("%d nodes, errors %v", len(f.Nodes), f.Errors)
		}
		if sw2 := f.NodeByGUID(0x200001); subnet.FormatPath(sw2.Path) != "0,1,5" {
			t.Errorf("Switch2 reached by %s, want 0,1,5", subnet.FormatPath(sw2.Path))
		}
	})
	t.Run("start unreachable", func(t *testing.T) {
		ff := twoSwitches(t, "Hca1")
		ff.Node("Hca1").Dead = true
		x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 10 * time.Millisecond, Retries: -1})
		defer x.Close()
		_, err := subnet.Discover(context.Background(), x, subnet.Options{})
		var te *madrpc.TimeoutError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "discovery start 0") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestDiscoverPartial: MaxHops and a start further away.
func TestDiscoverPartial(t *testing.T) {
	f := discover(t, twoSwitches(t, "Hca1"), subnet.Options{MaxHops: 1})
	if diff := cmp.Diff("Switch1 Hca1", descs(f.All())); diff != "" {
		t.Errorf("MaxHops 1 (-want +got):\n%s", diff)
	}
	f = discover(t, twoSwitches(t, "Hca1"), subnet.Options{From: []uint8{0, 1, 3}})
	if len(f.Nodes) != 6 || f.From.Desc != "Switch2" || f.Partial() {
		t.Errorf("from 0,1,3: nodes %s, from %s, errors %v", descs(f.All()), f.From.Desc, f.Errors)
	}
	f = discover(t, twoSwitches(t, "Hca1"), subnet.Options{From: []uint8{0, 1, 2}})
	if len(f.Nodes) != 6 || f.From.Desc != "Hca3" || f.Partial() {
		t.Errorf("from 0,1,2: nodes %s, from %s, errors %v", descs(f.All()), f.From.Desc, f.Errors)
	}
	if p := portOf(t, f, "Hca3:1"); p.Remote == nil || p.Remote.Node.Desc != "Switch1" || p.Remote.Num != 2 {
		t.Errorf("Hca3:1 linked to %v", p.Remote)
	}
}

// TestDiscoverLIDRouted: by LID once known, the same fabric as by directed
// route; an SMP that fails by LID goes again by directed route.
func TestDiscoverLIDRouted(t *testing.T) {
	want := discover(t, twoSwitches(t, "Hca1"), subnet.Options{})
	for _, noLID := range []string{"", "Switch2"} {
		ff := twoSwitches(t, "Hca1")
		if noLID != "" {
			ff.Node(noLID).NoLIDRoute = true
		}
		got := discover(t, ff, subnet.Options{LIDRouted: true})
		if got.Partial() {
			t.Fatalf("errors %v", got.Errors)
		}
		if diff := cmp.Diff(descs(want.All()), descs(got.All())); diff != "" {
			t.Errorf("nodes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(visits(t, want), visits(t, got)); diff != "" {
			t.Errorf("visits (-want +got):\n%s", diff)
		}
		for _, n := range want.Nodes {
			m := got.NodeByGUID(n.GUID)
			for i, p := range n.Ports {
				q := m.Port(i)
				if (p == nil) != (q == nil) || p != nil && ((p.Remote == nil) != (q.Remote == nil) || p.Remote != nil && p.Remote.Node.GUID != q.Remote.Node.GUID) {
					t.Errorf("%s port %d linked differently", n.Desc, i)
				}
			}
		}
		byLID := 0
		for _, key := range []string{"PortInfo lid 1:3", "SwitchInfo lid 1:0", "NodeDesc lid 1:0"} {
			byLID += ff.Asked(key)
		}
		if byLID != 3 {
			t.Errorf("Switch1's PortInfo 3, SwitchInfo and NodeDesc by LID: asked %d times, want 3", byLID)
		}
		wantFallbacks := 0
		if noLID != "" {
			wantFallbacks = 10 // Switch2: NodeDesc, SwitchInfo, PortInfo 1-8
		}
		if got.LIDFallbacks != wantFallbacks {
			t.Errorf("no LID route to %q: %d fallbacks, want %d", noLID, got.LIDFallbacks, wantFallbacks)
		}
	}
}

// TestDiscoverMlnxExtPortInfo: on Mellanox devices libibnetdisc reads
// MlnxExtPortInfo of QDR links (to tell FDR10), and so does Discover when
// asked; the order of the walk takes the extra SMP into account.
func TestDiscoverMlnxExtPortInfo(t *testing.T) {
	ff := twoSwitches(t, "Hca1")
	for _, id := range []string{"Switch1", "Hca1"} {
		n := ff.Node(id)
		n.DeviceID = 0xc738 // SwitchX
		if id == "Hca1" {
			n.DeviceID = 0x1003 // ConnectX-3
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 {
				p.Speed = 4 // QDR
			}
		}
	}
	ff.Node("Switch1").Ports[1].FDR10 = true
	ff.Node("Hca1").Ports[1].FDR10 = true
	f := discover(t, ff, subnet.Options{MlnxExtPortInfo: true})
	if f.Partial() {
		t.Fatalf("errors %v", f.Errors)
	}
	p := portOf(t, f, "Switch1:1")
	if p.ExtInfo == nil || p.ExtInfo.LinkSpeedActive != 1 {
		t.Errorf("Switch1 port 1 ExtInfo %+v, want FDR10 active", p.ExtInfo)
	}
	if q := portOf(t, f, "Switch1:3"); q.ExtInfo == nil || q.ExtInfo.LinkSpeedActive != 0 {
		t.Errorf("Switch1 port 3 ExtInfo %+v, want read and not FDR10", q.ExtInfo)
	}
	if q := portOf(t, f, "Switch2:3"); q.ExtInfo != nil {
		t.Errorf("Switch2 (not Mellanox) port 3 ExtInfo %+v, want not read", q.ExtInfo)
	}
	if n := ff.Asked("MlnxExtPortInfo 0,1:1"); n != 1 {
		t.Errorf("Switch1 port 1 MlnxExtPortInfo asked %d times, want 1", n)
	}
	// The same nodes in the same order as without it.
	want := discover(t, twoSwitches(t, "Hca1"), subnet.Options{})
	if diff := cmp.Diff(descs(want.All()), descs(f.All())); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	off := discover(t, ff, subnet.Options{})
	if p := portOf(t, off, "Switch1:1"); p.ExtInfo != nil {
		t.Errorf("without MlnxExtPortInfo: ExtInfo %+v", p.ExtInfo)
	}
}

// TestDiscoverPortsRead: the walk reports every port whose PortInfo it
// read, once, with the GUID, LID and PortInfo the fabric ends with, and
// each node's NodeInfo; with LID routing too.
func TestDiscoverPortsRead(t *testing.T) {
	for _, lidRouted := range []bool{false, true} {
		t.Run(fmt.Sprintf("LIDRouted=%v", lidRouted), func(t *testing.T) {
			type key struct {
				node rdma.GUID
				port int
			}
			got := map[key]subnet.PortRead{}
			infos := map[rdma.GUID]mad.NodeInfo{}
			calls := 0
			f := discover(t, twoSwitches(t, "Hca1"), subnet.Options{LIDRouted: lidRouted, PortsRead: func(np subnet.NodePorts) {
				calls++
				infos[np.Info.NodeGUID] = np.Info
				for i, p := range np.Ports {
					if i > 0 && np.Ports[i-1].Num >= p.Num {
						t.Errorf("node %s: ports out of order: %d after %d", np.Info.NodeGUID, p.Num, np.Ports[i-1].Num)
					}
					k := key{np.Info.NodeGUID, p.Num}
					if _, dup := got[k]; dup {
						t.Errorf("node %s port %d reported twice", np.Info.NodeGUID, p.Num)
					}
					got[k] = p
				}
			}})
			want := map[key]subnet.PortRead{}
			wantInfos := map[rdma.GUID]mad.NodeInfo{}
			for _, n := range f.Nodes {
				wantInfos[n.GUID] = n.Info
				for _, p := range n.Ports {
					if p != nil && p.Info != nil {
						want[key{n.GUID, p.Num}] = subnet.PortRead{Num: p.Num, GUID: p.GUID, LID: p.BaseLID, Info: *p.Info}
					}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ports reported (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantInfos, infos); diff != "" {
				t.Errorf("NodeInfos reported (-want +got):\n%s", diff)
			}
			if calls < len(f.Nodes) {
				t.Errorf("%d calls for %d nodes", calls, len(f.Nodes))
			}
		})
	}
}
