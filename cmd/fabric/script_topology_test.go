package fabric

import (
	"bufio"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/internal/simfabric"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
	"github.com/ibtool/ibtool/pkg/subnet/subnettest"
)

// routerNet has a router between a switch and a host, and a switch
// whose name holds parentheses.
const routerNet = `
Switch	4 "sw (spine)"
[1]	"h1"[1]
[3]	"rt"[1]

Hca	1 "h1"
[1]	"sw (spine)"[1]

Hca	2 "rt"
[1]	"sw (spine)"[3]
[2]	"h3"[1]

Hca	1 "h3"
[1]	"rt"[2]
`

// backToBackNet links two hosts directly.
const backToBackNet = `
Hca	1 "h1"
[1]	"h2 (b)"[1]

Hca	1 "h2 (b)"
[1]	"h1"[1]
`

// discoverNet discovers the ibsim net file from local after change (if
// any) changed the fake.
func discoverNet(t testing.TB, net, local string, change func(*subnettest.Fabric)) *subnet.Fabric {
	t.Helper()
	ff, err := subnettest.FromNet(net, local)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(ff)
	}
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 20 * time.Millisecond, Retries: 1})
	defer x.Close()
	fab, err := subnet.Discover(context.Background(), x, subnet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fab
}

// applyNetIDs sets the GUIDs, vendor and device IDs and system image
// GUIDs that the net file's lines before each node give (ibsim reads
// them; subnettest numbers nodes itself).
func applyNetIDs(t testing.TB, ff *subnettest.Fabric, net string) {
	t.Helper()
	header := regexp.MustCompile(`^(?:Switch|Hca|Ca|Rt)\s+\d+\s+"([^"]*)"`)
	attr := regexp.MustCompile(`^(switchguid|caguid|vendid|devid|sysimgguid)=0x([0-9a-f]+)`)
	ids := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(net))
	for sc.Scan() {
		if m := attr.FindStringSubmatch(sc.Text()); m != nil {
			v, err := strconv.ParseUint(m[2], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			ids[m[1]] = v
			continue
		}
		m := header.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n := ff.Node(m[1])
		if n == nil {
			t.Fatalf("no node %q", m[1])
		}
		for k, v := range ids {
			switch k {
			case "switchguid", "caguid":
				n.GUID = rdma.GUID(v)
				for _, p := range n.Ports {
					if p != nil && n.Type == mad.NodeTypeSwitch {
						p.GUID = n.GUID
					}
				}
			case "vendid":
				n.VendorID = uint32(v)
			case "devid":
				n.DeviceID = uint16(v)
			case "sysimgguid":
				n.SystemImageGUID = rdma.GUID(v)
			}
		}
		ids = map[string]uint64{}
	}
}

// scriptTopologyFabrics are the fabrics the scripts' readings are
// checked on.
func scriptTopologyFabrics(t testing.TB) map[string]*subnet.Fabric {
	t.Helper()
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	twoSwitches := read("../../internal/simfabric/testdata/net.2sw2path4hca")
	fakeTwoSwitches := func(t testing.TB, change func(*subnettest.Fabric)) *subnet.Fabric {
		return discoverNet(t, twoSwitches, "Hca1", change)
	}
	chassis := read("../../internal/simfabric/testdata/net.chassis")
	tree, err := simfabric.FatTree(simfabric.FatTreeSpec{Levels: 3, Hosts: 24, Radix: 8, HostPorts: 2})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*subnet.Fabric{
		"two switches, parallel links": fakeTwoSwitches(t, nil),
		"descriptions to clean, quotes, parentheses": fakeTwoSwitches(t, func(ff *subnettest.Fabric) {
			ff.Node("Hca2").Desc = "Hca\x01 \"quoted\" (\xc3\xa9t\xc3\xa9)"
			ff.Node("Hca3").Desc = "h3 base port 0 lid 9 lmc 0"
			ff.Node("Switch1").Desc = "Switch1 \"core\" (a)\x7f"
			ff.Node("Switch2").Desc = "MF0;sw:IS5030/U1 \xe2\x86\x92 port"
		}),
		"switch with no LID": fakeTwoSwitches(t, func(ff *subnettest.Fabric) { ff.Node("Switch2").Ports[0].LID = 0 }),
		"cut link": fakeTwoSwitches(t, func(ff *subnettest.Fabric) {
			p := ff.Node("Switch2").Ports[1]
			p.Remote.Remote, p.Remote = nil, nil
		}),
		"LMC and a host without LID": fakeTwoSwitches(t, func(ff *subnettest.Fabric) {
			ff.Node("Hca2").Ports[1].LMC = 2
			ff.Node("Hca4").Ports[1].LID = 0
		}),
		"router": discoverNet(t, routerNet, "h1", func(ff *subnettest.Fabric) {
			ff.Node("rt").Type = mad.NodeTypeRouter
		}),
		"back to back": discoverNet(t, backToBackNet, "h1", nil),
		"chassis":      discoverNet(t, chassis, "H1", func(ff *subnettest.Fabric) { applyNetIDs(t, ff, chassis) }),
		"chassis, a line board's name with parentheses": discoverNet(t, chassis, "H1", func(ff *subnettest.Fabric) {
			applyNetIDs(t, ff, chassis)
			ff.Node("L1").Desc = "L1 (line 1)"
		}),
		"chassis, a director's type with parentheses": discoverNet(t, chassis, "H1", func(ff *subnettest.Fabric) {
			applyNetIDs(t, ff, chassis)
			for _, id := range []string{"M_L05", "M_S02", "M_L12", "M_L05b"} {
				ff.Node(id).Desc = strings.Replace(ff.Node(id).Desc, "IS5100", "IS(5100)", 1)
			}
		}),
		"fat tree": discoverNet(t, string(tree), "H-0001", nil),
	}
}

// TestScriptTopologyFromFabric: the scripts' readings made from a
// discovered fabric equal those parsed from the ibnetdiscover -g text of
// it, on fabrics with parallel links, a switch without LID, a cut link,
// descriptions that need cleaning or hold quotes and parentheses, hosts
// linked back to back, a router, chassis and a fat tree.
func TestScriptTopologyFromFabric(t *testing.T) {
	for name, fab := range scriptTopologyFabrics(t) {
		t.Run(name, func(t *testing.T) {
			text := subnet.TopologyText(fab, true, time.Time{})
			want := parseScriptTopology(text)
			got := fabricScriptTopology(fab)
			if len(got.Sections) < 2 {
				t.Fatalf("only %d sections", len(got.Sections))
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(linkEnd{})); diff != "" {
				t.Errorf("unexpected topology (-want from text +got from fabric):\n%s", diff)
			}
		})
	}
}

// TestScriptTopologyQuirks pins readings the scripts' patterns give that
// the fabric path must reproduce: the chassis fixture has slot nodes
// written as switches and unnamed, the back-to-back hosts' port GUIDs run
// on to the other end's, a name's ')' and '"' move what is read.
func TestScriptTopologyQuirks(t *testing.T) {
	fabs := scriptTopologyFabrics(t)
	find := func(topo *scriptTopology, guid string) topoSection {
		t.Helper()
		for _, s := range topo.Sections {
			if s.Node != nil && s.Node.GUID == guid {
				return s
			}
		}
		t.Fatalf("no node %s", guid)
		return topoSection{}
	}
	var got []string
	router := fabricScriptTopology(fabs["router"])
	got = append(got, find(router, "0000000000100000").Ports[0].GUID)
	b2b := fabricScriptTopology(fabs["back to back"])
	got = append(got, find(b2b, "0000000000100000").Ports[0].GUID, find(b2b, "0000000000100002").Ports[0].GUID)
	if diff := cmp.Diff([]string{
		"0x100001) \t\"S-0000000000200000\"[1]\t\t# lid 2 lmc 0 \"sw (spine",
		"0x100001) \t\"H-0000000000100002\"[1] (100003) \t\t# lid 1 lmc 0 \"h2 (b",
		"0x100003) \t\"H-0000000000100000\"[1] (100001",
	}, got); diff != "" {
		t.Errorf("port GUIDs as read (-want +got):\n%s", diff)
	}
	if rt := find(router, "0000000000100002"); rt.Node.Keyword != "Rt" || rt.IDs.NodeGUID != "0x100002" {
		t.Errorf("router read as %+v %+v", rt.Node, rt.IDs)
	}
	quoted := fabricScriptTopology(fabs["descriptions to clean, quotes, parentheses"])
	sw := find(quoted, "0000000000200000")
	if sw.Node.Comment != `"Switch1 "core" (a) " base` {
		t.Errorf("Switch1's comment %q", sw.Node.Comment)
	}
	for _, p := range sw.Ports {
		if p.Link.remGUID == "0x0000000000100003" && p.Link.remDesc != " (  t  )" {
			t.Errorf("Hca2 as Switch1's port %d reads it: %q", p.Num, p.Link.remDesc)
		}
	}
	unnamed := 0
	for _, s := range fabricScriptTopology(fabs["chassis"]).Sections {
		if s.Node != nil && s.Node.Keyword == "Switch" && !s.Node.Named {
			unnamed++
		}
	}
	if unnamed == 0 {
		t.Error("no chassis slot written as an unnamed switch")
	}
}
