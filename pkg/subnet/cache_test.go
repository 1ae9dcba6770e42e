package subnet_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
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

// fabricView is what the file formats carry of a fabric, links written as
// "GUID:port", so that two fabrics compare with cmp.
type fabricView struct {
	From     string
	FromPort int
	MaxHops  int
	Nodes    []nodeView
	All      string
	Switches string
	CAs      string
}

type nodeView struct {
	GUID          rdma.GUID
	Type          mad.NodeType
	NumPorts      int
	Desc          string
	Path          string
	SMALID        rdma.LID
	SMALMC        uint8
	EnhancedPort0 bool
	Info          mad.NodeInfo
	InfoRaw       string
	DescRaw       string
	SwitchInfo    *mad.SwitchInfo
	SwitchInfoRaw string
	Ports         []portView
}

type portView struct {
	Num        int
	GUID       rdma.GUID
	ExtNum     int
	BaseLID    rdma.LID
	LMC        uint8
	Info       *mad.PortInfo
	InfoRaw    string
	ExtInfo    *mad.MlnxExtPortInfo
	ExtInfoRaw string
	Remote     string
}

func view(f *subnet.Fabric) fabricView {
	v := fabricView{From: f.From.GUID.String(), FromPort: f.FromPort, MaxHops: f.MaxHops, All: descs(f.All()),
		Switches: descs(f.ByType(mad.NodeTypeSwitch)), CAs: descs(f.ByType(mad.NodeTypeCA))}
	for _, n := range f.Nodes {
		nv := nodeView{GUID: n.GUID, Type: n.Type, NumPorts: n.NumPorts, Desc: n.Desc, SMALID: n.SMALID, SMALMC: n.SMALMC,
			EnhancedPort0: n.EnhancedPort0, Info: n.Info, InfoRaw: hex.EncodeToString(n.InfoRaw[:]),
			DescRaw: hex.EncodeToString(n.DescRaw[:]), SwitchInfo: n.SwitchInfo,
			SwitchInfoRaw: hex.EncodeToString(n.SwitchInfoRaw[:])}
		if n.Path != nil {
			nv.Path = subnet.FormatPath(n.Path)
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			pv := portView{Num: p.Num, GUID: p.GUID, ExtNum: p.ExtNum, BaseLID: p.BaseLID, LMC: p.LMC, Info: p.Info,
				InfoRaw: hex.EncodeToString(p.InfoRaw[:]), ExtInfo: p.ExtInfo}
			if p.ExtInfoRaw != nil {
				pv.ExtInfoRaw = hex.EncodeToString(p.ExtInfoRaw[:])
			}
			if r := p.Remote; r != nil {
				pv.Remote = fmt.Sprintf("%s:%d", r.Node.GUID, r.Num)
			}
			nv.Ports = append(nv.Ports, pv)
		}
		v.Nodes = append(v.Nodes, nv)
	}
	return v
}

// cached returns the ports a cache records: those whose PortInfo was read.
func cached(f *subnet.Fabric) fabricView {
	v := view(f)
	for i := range v.Nodes {
		var ports []portView
		for _, p := range v.Nodes[i].Ports {
			if p.Info != nil {
				ports = append(ports, p)
			}
		}
		v.Nodes[i].Ports = ports
	}
	return v
}

func writeCache(t testing.TB, f *subnet.Fabric) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteCache(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readCache(t testing.TB, b []byte) *subnet.Fabric {
	t.Helper()
	f, err := subnet.ReadCache(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCacheRoundTrip: what WriteCache writes, ReadCache reads back as it
// was, and writes again the same.
func TestCacheRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name  string
		local string
		fault func(*subnettest.Fabric)
		o     subnet.Options
	}{
		{name: "from Hca1", local: "Hca1"},
		{name: "from Switch2", local: "Switch2"},
		{name: "dead Hca4", local: "Hca1", fault: func(f *subnettest.Fabric) { f.Node("Hca4").Dead = true }},
		{name: "dead Switch2", local: "Hca1", fault: func(f *subnettest.Fabric) { f.Node("Switch2").Dead = true }},
		{name: "link down", local: "Hca1", fault: func(f *subnettest.Fabric) { f.Node("Switch1").Ports[3].Down = true }},
		{name: "MaxHops 1", local: "Hca1", o: subnet.Options{MaxHops: 1}},
		{name: "MlnxExtPortInfo asked", local: "Hca1", o: subnet.Options{MlnxExtPortInfo: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ff := twoSwitches(t, c.local)
			if c.fault != nil {
				c.fault(ff)
			}
			f := discover(t, ff, c.o)
			b := writeCache(t, f)
			got := readCache(t, b)
			if diff := cmp.Diff(cached(f), view(got)); diff != "" {
				t.Errorf("read back (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(b, writeCache(t, got)); diff != "" {
				t.Errorf("written again (-want +got):\n%s", diff)
			}
			if len(got.Visits) != 0 || got.MADs != 0 || got.Partial() {
				t.Errorf("loaded fabric has visits %d, MADs %d, errors %v", len(got.Visits), got.MADs, got.Errors)
			}
			for _, n := range f.Nodes {
				if g := got.NodeByGUID(n.GUID); g == nil || g.Desc != n.Desc {
					t.Errorf("NodeByGUID(%s) = %v", n.GUID, g)
				}
			}
		})
	}
}

// TestCacheFromRoute: a walk that starts at a node some hops away keeps its
// nodes and links; the routes read back start at that node.
func TestCacheFromRoute(t *testing.T) {
	f := discover(t, twoSwitches(t, "Hca1"), subnet.Options{From: []uint8{0, 1, 3}})
	got := readCache(t, writeCache(t, f))
	want := cached(f)
	paths := map[string]string{"Switch2": "0", "Switch1": "0,3", "Hca2": "0,1", "Hca4": "0,2", "Hca1": "0,3,1", "Hca3": "0,3,2"}
	for i := range want.Nodes {
		want.Nodes[i].Path = paths[want.Nodes[i].Desc]
	}
	if diff := cmp.Diff(want, view(got)); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// TestCacheUnreadPort: a port whose PortInfo was not read is not recorded,
// nor the link to it, so that the file loads (as later rdma-core does).
func TestCacheUnreadPort(t *testing.T) {
	f := discover(t, twoSwitches(t, "Hca1"), subnet.Options{})
	p := portOf(t, f, "Switch1:3")
	p.Info, p.InfoRaw = nil, [mad.SMPDataLen]byte{}
	got := readCache(t, writeCache(t, f))
	sw1, sw2 := got.NodeByGUID(0x200000), got.NodeByGUID(0x200001)
	if sw1.Port(3) != nil {
		t.Errorf("Switch1 port 3 read back: %+v", sw1.Port(3))
	}
	if r := sw2.Port(3).Remote; r != nil {
		t.Errorf("Switch2 port 3 linked to %s:%d", r.Node.Desc, r.Num)
	}
	if r := sw2.Port(5).Remote; r != sw1.Port(5) {
		t.Errorf("Switch2 port 5 not linked to Switch1 port 5")
	}
}

// skeleton is a cache file without its attribute bytes and LIDs: what
// must agree between a fake fabric and ibsim's.
func skeleton(t *testing.T, b []byte) string {
	t.Helper()
	le := binary.LittleEndian
	var s strings.Builder
	nodes, ports := le.Uint32(b[8:]), le.Uint32(b[12:])
	fmt.Fprintf(&s, "nodes %d ports %d from %#x maxhops %d\n", nodes, ports, le.Uint64(b[16:]), le.Uint32(b[24:]))
	off := 28
	for range nodes {
		r := b[off:]
		desc, _, _ := bytes.Cut(r[142:206], []byte{0})
		fmt.Fprintf(&s, "node %#x type %d ports %d %q enhsp0 %d:", le.Uint64(r[68:]), r[76], r[77], desc, r[3])
		count := int(r[206])
		off += 207
		for range count {
			fmt.Fprintf(&s, " %#x:%d", le.Uint64(b[off:]), b[off+8])
			off += 9
		}
		s.WriteString("\n")
	}
	for range ports {
		r := b[off:]
		fmt.Fprintf(&s, "port %#x:%d ext %d node %#x", le.Uint64(r), r[8], r[9], le.Uint64(r[77:]))
		if r[85] != 0 {
			fmt.Fprintf(&s, " -> %#x:%d", le.Uint64(r[86:]), r[94])
		}
		s.WriteString("\n")
		off += 95
	}
	return s.String()
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCacheGolden reads caches infiniband-diags 44's ibnetdiscover wrote on
// ibsim (testdata/README.md) and writes them back byte for byte; the caches
// the fake fabric's discovery writes agree with them in every node, port
// and link and in their order.
func TestCacheGolden(t *testing.T) {
	t.Run("2sw2path4hca", func(t *testing.T) {
		golden := readFile(t, "testdata/2sw2path4hca.hca1.cache")
		got := readCache(t, golden)
		if diff := cmp.Diff("Switch2 Switch1", descs(got.ByType(mad.NodeTypeSwitch))); diff != "" {
			t.Errorf("switch order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff("Hca4 Hca2 Hca3 Hca1", descs(got.ByType(mad.NodeTypeCA))); diff != "" {
			t.Errorf("CA order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff("Hca4 Hca2 Switch2 Hca3 Switch1 Hca1", descs(got.All())); diff != "" {
			t.Errorf("node order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(golden, writeCache(t, got)); diff != "" {
			t.Errorf("written back (-want +got):\n%s", diff)
		}

		f := discover(t, twoSwitches(t, "Hca1"), subnet.Options{})
		if diff := cmp.Diff(skeleton(t, golden), skeleton(t, writeCache(t, f))); diff != "" {
			t.Errorf("fake fabric's cache (-ibnetdiscover +ours):\n%s", diff)
		}
		// Same nodes, routes, links and start; attributes and LIDs are
		// ibsim's and opensm's.
		type linkView struct{ Desc, Path, Links string }
		links := func(f *subnet.Fabric) (out []linkView) {
			for _, n := range f.Nodes {
				var l []string
				for _, p := range n.Ports {
					if p != nil && p.Remote != nil {
						l = append(l, fmt.Sprintf("%d-%s:%d", p.Num, p.Remote.Node.Desc, p.Remote.Num))
					}
				}
				out = append(out, linkView{n.Desc, subnet.FormatPath(n.Path), strings.Join(l, " ")})
			}
			return out
		}
		if diff := cmp.Diff(links(f), links(got)); diff != "" {
			t.Errorf("nodes, routes and links (-discovered +loaded):\n%s", diff)
		}
		if got.From.Desc != "Hca1" || got.FromPort != 1 || got.MaxHops != 3 {
			t.Errorf("from %s port %d, MaxHops %d; want Hca1 port 1, 3", got.From.Desc, got.FromPort, got.MaxHops)
		}
		sw1 := got.NodeByGUID(0x200000)
		if sw1.SMALID != 1 || sw1.Port(3).BaseLID != 1 || sw1.SwitchInfo == nil || sw1.SwitchInfo.LinearFDBTop == 0 {
			t.Errorf("Switch1: SMA LID %d, port 3 LID %d, SwitchInfo %+v", sw1.SMALID, sw1.Port(3).BaseLID, sw1.SwitchInfo)
		}
		if p := got.PortByLID(5); p == nil || p.Node.Desc != "Hca3" {
			t.Errorf("PortByLID(5) = %v, want Hca3's port", p)
		}
	})

	// net.collide puts SwB and SwC in the same bucket of libibnetdisc's
	// port table: the walk adds SwB:0 SwC:0 SwB:1-4 SwC:1-4, a load SwB:0-4
	// SwC:0-4, so ibnetdiscover --load-cache --cache writes another order.
	t.Run("collide", func(t *testing.T) {
		discovered := readFile(t, "testdata/collide.hca1.cache")
		reloaded := readFile(t, "testdata/collide.hca1.reload.cache")
		ff, err := subnettest.FromNet(string(readFile(t, "testdata/net.collide")), "Hca1")
		if err != nil {
			t.Fatal(err)
		}
		f := discover(t, ff, subnet.Options{})
		if diff := cmp.Diff(skeleton(t, discovered), skeleton(t, writeCache(t, f))); diff != "" {
			t.Errorf("fake fabric's cache (-ibnetdiscover +ours):\n%s", diff)
		}
		if diff := cmp.Diff(skeleton(t, reloaded), skeleton(t, writeCache(t, readCache(t, writeCache(t, f))))); diff != "" {
			t.Errorf("fake fabric's cache reloaded (-ibnetdiscover +ours):\n%s", diff)
		}
		if diff := cmp.Diff(reloaded, writeCache(t, readCache(t, discovered))); diff != "" {
			t.Errorf("load and cache (-ibnetdiscover +ours):\n%s", diff)
		}
		if diff := cmp.Diff(reloaded, writeCache(t, readCache(t, reloaded))); diff != "" {
			t.Errorf("reloaded written back (-want +got):\n%s", diff)
		}
		got := readCache(t, discovered)
		if diff := cmp.Diff("Hca3 Hca2 SwC SwB SwA Hca1", descs(got.All())); diff != "" {
			t.Errorf("node order (-want +got):\n%s", diff)
		}
		hca2 := got.NodeByGUID(0x100003)
		if got := subnet.FormatPath(hca2.Path); got != "0,1,2,2" {
			t.Errorf("Hca2 path %s, want 0,1,2,2", got)
		}
		if p := hca2.Port(2); p == nil || p.Remote == nil || p.Remote.Node.Desc != "SwC" || p.Remote.Num != 3 {
			t.Errorf("Hca2 port 2: %+v", p)
		}
	})
}

// Test cache files, built field by field.
type tNode struct {
	guid      uint64
	typ       uint8
	nports    uint8
	localPort uint8 // NodeInfo LocalPortNum; the rest of the attributes are zero
	keys      []tKey
}

type tKey struct {
	guid uint64
	num  uint8
}

type tPort struct {
	guid   uint64
	num    uint8
	node   uint64
	remote *tKey
}

type tCache struct {
	magic, version uint32
	nodeCount      int // -1: len(nodes)
	portCount      int // -1: len(ports)
	from           uint64
	nodes          []tNode
	ports          []tPort
}

func (c tCache) encode() []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, c.magic)
	b = le.AppendUint32(b, c.version)
	count := func(n, def int) uint32 {
		if n < 0 {
			return uint32(def)
		}
		return uint32(n)
	}
	b = le.AppendUint32(b, count(c.nodeCount, len(c.nodes)))
	b = le.AppendUint32(b, count(c.portCount, len(c.ports)))
	b = le.AppendUint64(b, c.from)
	b = le.AppendUint32(b, 1)
	for _, n := range c.nodes {
		b = append(b, make([]byte, 4+64)...)
		b = le.AppendUint64(b, n.guid)
		b = append(b, n.typ, n.nports)
		info := make([]byte, 128)
		info[36] = n.localPort
		b = append(b, info...)
		b = append(b, uint8(len(n.keys)))
		for _, k := range n.keys {
			b = le.AppendUint64(b, k.guid)
			b = append(b, k.num)
		}
	}
	for _, p := range c.ports {
		b = le.AppendUint64(b, p.guid)
		b = append(b, p.num, 0, 0, 0, 0)
		b = append(b, make([]byte, 64)...)
		b = le.AppendUint64(b, p.node)
		if p.remote != nil {
			b = append(b, 1)
			b = le.AppendUint64(b, p.remote.guid)
			b = append(b, p.remote.num)
		} else {
			b = append(b, make([]byte, 10)...)
		}
	}
	return b
}

// smallCache is a switch (0x20, port GUID 0x21) and two CAs (0x10 and
// 0x12, ports 0x11 and 0x13) on its ports 1 and 2.
func smallCache() tCache {
	return tCache{magic: 0x8FE7832B, version: 1, nodeCount: -1, portCount: -1, from: 0x10,
		nodes: []tNode{
			{guid: 0x12, typ: 1, nports: 1, keys: []tKey{{0x13, 1}}},
			{guid: 0x20, typ: 2, nports: 2, keys: []tKey{{0x21, 0}, {0x21, 1}, {0x21, 2}}},
			{guid: 0x10, typ: 1, nports: 1, localPort: 1, keys: []tKey{{0x11, 1}}},
		},
		ports: []tPort{
			{guid: 0x11, num: 1, node: 0x10, remote: &tKey{0x21, 1}},
			{guid: 0x13, num: 1, node: 0x12, remote: &tKey{0x21, 2}},
			{guid: 0x21, num: 0, node: 0x20},
			{guid: 0x21, num: 1, node: 0x20, remote: &tKey{0x11, 1}},
			{guid: 0x21, num: 2, node: 0x20, remote: &tKey{0x13, 1}},
		}}
}

func TestReadCacheSmall(t *testing.T) {
	f := readCache(t, smallCache().encode())
	if diff := cmp.Diff("0x10 0x20 0x12", fmt.Sprintf("%#x %#x %#x", uint64(f.Nodes[0].GUID), uint64(f.Nodes[1].GUID), uint64(f.Nodes[2].GUID))); diff != "" {
		t.Errorf("Nodes (-want +got):\n%s", diff)
	}
	sw := f.NodeByGUID(0x20)
	if p := sw.Port(2); p.Remote == nil || p.Remote.Node.GUID != 0x12 || p.Remote.Remote != p {
		t.Errorf("switch port 2 not linked to CA 0x12")
	}
	// All-zero PortInfo: not up, so no route beyond the start node.
	if f.From.GUID != 0x10 || subnet.FormatPath(f.From.Path) != "0" || sw.Path != nil {
		t.Errorf("from %s path %v, switch path %v", f.From.GUID, f.From.Path, sw.Path)
	}
}

// TestReadCacheMalformed: every malformed file is an error that says what
// is wrong, never a panic.
func TestReadCacheMalformed(t *testing.T) {
	good := smallCache().encode()
	for _, c := range []struct {
		name string
		edit func(c *tCache)
		raw  []byte // instead of edit
		want string
	}{
		{name: "empty", raw: []byte{}, want: "cache: truncated header: 0 of 28 bytes"},
		{name: "short header", raw: good[:20], want: "cache: truncated header: 20 of 28 bytes"},
		{name: "bad magic", edit: func(c *tCache) { c.magic = 0x12345678 },
			want: "cache: bad magic 0x12345678, want 0x8fe7832b: not a libibnetdisc cache file"},
		{name: "bad magic short", raw: []byte("TOPO"),
			want: "cache: bad magic 0x4f504f54, want 0x8fe7832b: not a libibnetdisc cache file"},
		{name: "bad version", edit: func(c *tCache) { c.version = 2 }, want: "cache: version 2, only version 1 is known"},
		{name: "node count too large", edit: func(c *tCache) { c.nodeCount = 0xffffffff },
			want: "cache: truncated: the header's 4294967295 nodes and 5 ports take at least 889058230540 bytes after it, the file has 1141"},
		{name: "port count too large", edit: func(c *tCache) { c.portCount = 0x10000000 },
			want: "cache: truncated: the header's 3 nodes and 268435456 ports take at least 25501368941 bytes after it, the file has 1141"},
		{name: "port count too small", edit: func(c *tCache) { c.portCount = 4 },
			want: "cache: 95 bytes after the last port record (offset 1074)"},
		{name: "trailing bytes", raw: append(bytes.Clone(good), 1, 2, 3),
			want: "cache: 3 bytes after the last port record (offset 1169)"},
		{name: "node twice", edit: func(c *tCache) { c.nodes[2].guid = 0x12 },
			want: "cache: node record 3: node GUID 0x0000000000000012 is in the file twice"},
		{name: "port beyond node's ports", edit: func(c *tCache) { c.nodes[0].keys[0].num = 2 },
			want: "cache: node 0x0000000000000012 lists port number 2, beyond its 1 ports"},
		{name: "port listed twice", edit: func(c *tCache) { c.nodes[1].keys[2] = tKey{0x21, 1} },
			want: "cache: node 0x0000000000000020 lists port number 1 twice"},
		{name: "port not recorded", edit: func(c *tCache) { c.nodes[0].keys[0].guid = 0x99 },
			want: "cache: node 0x0000000000000012 lists port (GUID 0x0000000000000099, number 1), which has no port record"},
		{name: "port recorded twice", edit: func(c *tCache) { c.ports = append(c.ports, c.ports[0]) },
			want: "cache: port record 6: port (GUID 0x0000000000000011, number 1) is recorded twice"},
		{name: "port in no list", edit: func(c *tCache) { c.ports = append(c.ports, tPort{guid: 0x21, num: 3, node: 0x20}) },
			want: "cache: port (GUID 0x0000000000000021, number 3) of node 0x0000000000000020 is in no node's port list"},
		{name: "port on another node", edit: func(c *tCache) { c.ports[1].node = 0x10 },
			want: "cache: node 0x0000000000000012 lists port (GUID 0x0000000000000013, number 1), whose record puts it on node 0x0000000000000010"},
		{name: "port listed by two nodes", edit: func(c *tCache) { c.nodes[2].keys[0] = tKey{0x13, 1} },
			want: "cache: port (GUID 0x0000000000000013, number 1) is listed by two nodes"},
		{name: "dangling link", edit: func(c *tCache) { c.ports[3].remote = &tKey{0x11, 2} },
			want: "cache: port (GUID 0x0000000000000021, number 1) links to port (GUID 0x0000000000000011, number 2), which has no port record"},
		{name: "one-way link", edit: func(c *tCache) { c.ports[3].remote = nil },
			want: "cache: port (GUID 0x0000000000000011, number 1) links to port (GUID 0x0000000000000021, number 1), which links to nothing"},
		{name: "crossed links", edit: func(c *tCache) { c.ports[3].remote = &tKey{0x13, 1} },
			want: "cache: port (GUID 0x0000000000000011, number 1) links to port (GUID 0x0000000000000021, number 1), which links to port (GUID 0x0000000000000013, number 1)"},
		{name: "self link", edit: func(c *tCache) { c.ports[2].remote = &tKey{0x21, 0} },
			want: "cache: port (GUID 0x0000000000000021, number 0) links to itself"},
		{name: "start node missing", edit: func(c *tCache) { c.from = 0x11 },
			want: "cache: the start node 0x0000000000000011 is not in the file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.raw
			if c.edit != nil {
				tc := smallCache()
				c.edit(&tc)
				b = tc.encode()
			}
			f, err := subnet.ReadCache(bytes.NewReader(b))
			if err == nil {
				t.Fatalf("no error; read %d nodes", len(f.Nodes))
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadCacheTruncated cuts files short at every length.
func TestReadCacheTruncated(t *testing.T) {
	for _, b := range [][]byte{smallCache().encode(), readFile(t, "testdata/2sw2path4hca.hca1.cache")} {
		for n := range len(b) {
			_, err := subnet.ReadCache(bytes.NewReader(b[:n]))
			if err == nil || !strings.HasPrefix(err.Error(), "cache: truncated") {
				t.Errorf("cut at %d of %d: err %v, want truncated", n, len(b), err)
			}
		}
	}
}

// TestWriteCacheErrors: fabrics the formats cannot hold.
func TestWriteCacheErrors(t *testing.T) {
	for _, c := range []struct {
		name      string
		edit      func(f *subnet.Fabric)
		want      string
		cacheOnly bool // JSON names ports by node and number
	}{
		{name: "no start", edit: func(f *subnet.Fabric) { f.From = nil }, want: "the fabric has no From node"},
		{name: "start elsewhere", edit: func(f *subnet.Fabric) { f.From = &subnet.Node{GUID: 7} },
			want: "the From node 0x0000000000000007 is not among the fabric's nodes"},
		{name: "GUID twice", edit: func(f *subnet.Fabric) { f.Nodes[1].GUID = f.Nodes[0].GUID },
			want: "two nodes have GUID 0x0000000000100000"},
		{name: "link out of the fabric", edit: func(f *subnet.Fabric) { f.Nodes = f.Nodes[:2] },
			want: "node 0x0000000000200000 port 2: linked to a port that is not in the fabric"},
		{name: "port misplaced", edit: func(f *subnet.Fabric) { f.Nodes[1].Ports[4] = f.Nodes[1].Ports[6] },
			want: "node 0x0000000000200000: Ports[4] holds port 6 of node 0x0000000000200000"},
		{name: "external number", edit: func(f *subnet.Fabric) { f.Nodes[1].Ports[4].ExtNum = 256 },
			want: "node 0x0000000000200000 port 4: external port number 256 out of range"},
		{name: "ports alike", edit: func(f *subnet.Fabric) { portOf(t, f, "Hca3:1").GUID = 0x100001 },
			want: "two ports are port (GUID 0x0000000000100001, number 1)", cacheOnly: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := discover(t, twoSwitches(t, "Hca1"), subnet.Options{})
			c.edit(f)
			prefix := map[string]string{"cache": "cache: ", "json": "fabric JSON: "}
			for format, write := range map[string]func(*bytes.Buffer) error{
				"cache": func(b *bytes.Buffer) error { return f.WriteCache(b) },
				"json":  func(b *bytes.Buffer) error { return f.WriteJSON(b) },
			} {
				var b bytes.Buffer
				err := write(&b)
				if format == "json" && c.cacheOnly {
					if err != nil {
						t.Errorf("json: %v", err)
					}
					continue
				}
				if err == nil {
					t.Fatalf("%s: no error", format)
				}
				if diff := cmp.Diff(prefix[format]+c.want, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func writeJSON(t testing.TB, f *subnet.Fabric) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readJSON(t testing.TB, b []byte) *subnet.Fabric {
	t.Helper()
	f, err := subnet.ReadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestJSONRoundTrip: ReadJSON gives back what WriteJSON wrote, down to the
// raw bytes and the attributes not read.
func TestJSONRoundTrip(t *testing.T) {
	t.Run("discovered", func(t *testing.T) {
		ff := twoSwitches(t, "Hca1")
		ff.Node("Hca4").Dead = true
		f := discover(t, ff, subnet.Options{})
		// MlnxExtPortInfo read on one port, PortInfo not on another, an
		// external port number, a description with a NUL inside.
		p := portOf(t, f, "Switch1:3")
		p.ExtInfoRaw = new([mad.SMPDataLen]byte)
		p.ExtInfoRaw[15] = 1
		p.ExtInfo = &mad.MlnxExtPortInfo{LinkSpeedActive: 1}
		q := portOf(t, f, "Switch2:7")
		q.Info, q.InfoRaw = nil, [mad.SMPDataLen]byte{}
		portOf(t, f, "Switch2:5").ExtNum = 12
		sw := f.NodeByGUID(0x200001)
		copy(sw.DescRaw[7:], "\x00<hidden>")
		b := writeJSON(t, f)
		got := readJSON(t, b)
		if diff := cmp.Diff(view(f), view(got)); diff != "" {
			t.Errorf("read back (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(string(b), string(writeJSON(t, got))); diff != "" {
			t.Errorf("written again (-want +got):\n%s", diff)
		}
		if !strings.Contains(string(b), `"path": "0,1,3"`) {
			t.Errorf("no path 0,1,3 in\n%s", b)
		}
	})
	t.Run("from cache", func(t *testing.T) {
		golden := readFile(t, "testdata/collide.hca1.reload.cache")
		f := readCache(t, golden)
		got := readJSON(t, writeJSON(t, f))
		if diff := cmp.Diff(view(f), view(got)); diff != "" {
			t.Errorf("read back (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(golden, writeCache(t, got)); diff != "" {
			t.Errorf("cache of the JSON (-want +got):\n%s", diff)
		}
	})
}

// TestJSONShape pins the document's form.
func TestJSONShape(t *testing.T) {
	f := readCache(t, smallCache().encode())
	sw := f.NodeByGUID(0x20)
	copy(sw.DescRaw[:], "sw")
	sw.Desc = "sw"
	want := `{
  "version": 1,
  "fromNode": "0x0000000000000010",
  "fromPort": 1,
  "maxHops": 1,
  "nodes": [
    {
      "nodeGUID": "0x0000000000000010",
      "type": "CA",
      "numPorts": 1,
      "description": "",
      "path": "0",
      "smaLID": 0,
      "smaLMC": 0,
      "enhancedPort0": false,
      "nodeInfo": "NODEINFO",
      "nodeDescription": "",
      "ports": [
        {
          "port": 1,
          "portGUID": "0x0000000000000011",
          "lid": 0,
          "lmc": 0,
          "portInfo": "00",
          "remote": {
            "nodeGUID": "0x0000000000000020",
            "port": 1
          }
        }
      ]
    },
    {
      "nodeGUID": "0x0000000000000020",
      "type": "Switch",
      "numPorts": 2,
      "description": "sw",
      "smaLID": 0,
      "smaLMC": 0,
      "enhancedPort0": false,
      "nodeInfo": "",
      "nodeDescription": "7377",
      "ports": [
        {
          "port": 0,
          "portGUID": "0x0000000000000021",
          "lid": 0,
          "lmc": 0,
          "portInfo": "00"
        },
`
	want = strings.Replace(want, "NODEINFO", strings.Repeat("00", 36)+"01", 1)
	got := string(writeJSON(t, f))
	if diff := cmp.Diff(want, got[:min(len(want), len(got))]); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

// TestReadJSONMalformed: documents that do not make a fabric.
func TestReadJSONMalformed(t *testing.T) {
	f := readCache(t, smallCache().encode())
	good := string(writeJSON(t, f))
	for _, c := range []struct {
		name, old, new, want string
	}{
		{name: "not JSON", old: "{", new: "[", want: "fabric JSON: invalid character ':' after array element"},
		{name: "version", old: `"version": 1`, new: `"version": 2`, want: "fabric JSON: version 2, only version 1 is known"},
		{name: "unknown field", old: `"maxHops"`, new: `"hops"`, want: `fabric JSON: json: unknown field "hops"`},
		{name: "bad GUID", old: `"nodeGUID": "0x0000000000000012"`, new: `"nodeGUID": "12"`,
			want: `fabric JSON: invalid GUID "12": want 0x followed by hex digits, or the colon form 0002:c903:00a1:b2c4`},
		{name: "type", old: `"type": "Switch"`, new: `"type": "Hub"`,
			want: `fabric JSON: node 0x0000000000000020: type "Hub": want CA, Switch, Router or a number up to 255`},
		{name: "numPorts", old: `"numPorts": 2`, new: `"numPorts": 256`,
			want: "fabric JSON: node 0x0000000000000020: numPorts 256 out of range"},
		{name: "port beyond", old: `"port": 2,`, new: `"port": 3,`,
			want: "fabric JSON: node 0x0000000000000020: port 3 out of range for 2 ports"},
		{name: "path", old: `"path": "0"`, new: `"path": "0,256"`,
			want: `fabric JSON: node 0x0000000000000010: path "0,256": want port numbers 0-255 separated by commas`},
		{name: "hex", old: `"portInfo": "00"`, new: `"portInfo": "0g"`,
			want: "fabric JSON: node 0x0000000000000010: port 1: portInfo: encoding/hex: invalid byte: U+0067 'g'"},
		{name: "hex too long", old: `"nodeInfo": "00`, new: `"nodeInfo": "` + strings.Repeat("00", 65),
			want: "fabric JSON: node 0x0000000000000010: nodeInfo: 202 hex digits, more than 64 bytes"},
		{name: "dangling link", old: `"nodeGUID": "0x0000000000000020",
            "port": 1`, new: `"nodeGUID": "0x0000000000000099",
            "port": 1`, want: "fabric JSON: node 0x0000000000000010 port 1: remote node 0x0000000000000099 is not in the fabric"},
		{name: "one-way link", old: `"nodeGUID": "0x0000000000000020",
            "port": 1`, new: `"nodeGUID": "0x0000000000000020",
            "port": 2`, want: "fabric JSON: node 0x0000000000000010 port 1 links to node 0x0000000000000020 port 2, which does not link back"},
		{name: "start", old: `"fromNode": "0x0000000000000010"`, new: `"fromNode": "0x0000000000000011"`,
			want: "fabric JSON: fromNode 0x0000000000000011 is not in the fabric"},
		{name: "second document", old: "\n}\n", new: "\n}\n{}", want: "fabric JSON: data after the fabric"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(good, c.old, c.new, 1)
			if doc == good {
				t.Fatalf("%q not in the document", c.old)
			}
			_, err := subnet.ReadJSON(strings.NewReader(doc))
			if err == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(c.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// discover2sw2path4hca discovers ibsim's net.2sw2path4hca from Hca1 on a
// fake fabric, for the fuzz targets' seeds.
func discover2sw2path4hca(f *testing.F) *subnet.Fabric {
	f.Helper()
	ff, err := subnettest.FromNet(string(readFile(f, "../../internal/simfabric/testdata/net.2sw2path4hca")), "Hca1")
	if err != nil {
		f.Fatal(err)
	}
	x := madrpc.NewTransactor(ff.Transport(), madrpc.TransactorOptions{Timeout: 50 * time.Millisecond, Retries: 2})
	defer x.Close()
	fab, err := subnet.Discover(f.Context(), x, subnet.Options{})
	if err != nil {
		f.Fatal(err)
	}
	return fab
}

// FuzzReadCache: no input panics; what reads writes back in a form that
// reads and writes the same, through JSON too.
func FuzzReadCache(f *testing.F) {
	fab := discover2sw2path4hca(f)
	f.Add(writeCache(f, fab))
	f.Add(smallCache().encode())
	f.Add(readFile(f, "testdata/2sw2path4hca.hca1.cache"))
	f.Add(readFile(f, "testdata/collide.hca1.cache"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fab, err := subnet.ReadCache(bytes.NewReader(b))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cache: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		once := writeCache(t, fab)
		twice := writeCache(t, readCache(t, once))
		if !bytes.Equal(once, twice) {
			t.Fatalf("written, read and written again differs")
		}
		if !bytes.Equal(once, writeCache(t, readJSON(t, writeJSON(t, fab)))) {
			t.Fatalf("through JSON differs")
		}
	})
}

// FuzzReadJSON: no input panics, ReadJSON's errors say what failed, and a
// fabric it accepts writes back JSON that reads and writes the same and
// groups into chassis as --load-cache does.
func FuzzReadJSON(f *testing.F) {
	fab := discover2sw2path4hca(f)
	f.Add(writeJSON(f, fab))
	f.Add(writeJSON(f, readCache(f, smallCache().encode())))
	f.Add(writeJSON(f, readCache(f, readFile(f, "testdata/collide.hca1.cache"))))
	f.Add([]byte(`{"version":1,"maxHops":0,"nodes":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fab, err := subnet.ReadJSON(bytes.NewReader(b))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fabric JSON: ") {
				t.Fatalf("error %q", err)
			}
			return
		}
		once := writeJSON(t, fab)
		if twice := writeJSON(t, readJSON(t, once)); !bytes.Equal(once, twice) {
			t.Fatalf("written, read and written again differs:\n%s\n%s", once, twice)
		}
		fab.GroupChassis()
	})
}
