package subnet

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// libibnetdisc's cache file, version 1 (rdma-core 44, ibnetdisc_cache.c),
// is what `ibnetdiscover --cache FILE` writes and `--load-cache FILE`
// reads. Every integer is little endian; every attribute is the 64 bytes
// of the SMP data area as received.
//
//	header (28 bytes): magic 0x8FE7832B (4), version 1 (4), node count (4),
//	    port count (4), GUID of the node discovery started from (8),
//	    maxhops_discovered (4)
//	node records, the fabric's node list (newest first), each 207 bytes
//	    and a port list: SMA LID (2), SMA LMC (1), EnhancedPort0 (1),
//	    SwitchInfo (64), node GUID (8), node type (1), number of ports (1),
//	    NodeInfo (64), NodeDescription (64), count of ports listed (1),
//	    then for each port that has a record, by port number: port GUID
//	    (8) and port number (1)
//	port records, 95 bytes each: port GUID (8), port number (1),
//	    external port number (1), base LID (2), LMC (1), PortInfo (64),
//	    GUID of the node the port is on (8), remote port flag (1), remote
//	    port GUID (8), remote port number (1); the last three are 0 when
//	    there is no remote port
//
// A port is known by its port GUID and number (a switch's ports share one
// GUID). The file holds no directed routes, no MlnxExtPortInfo, no chassis
// grouping and not the start node's port number.
//
// The port records come in the order of libibnetdisc's port GUID hash
// table: its 137 buckets in turn, each bucket's ports the most recently
// added first. Discovery adds a port when its first PortInfo answer
// arrives; ibnd_load_fabric adds them node by node, oldest node first, in
// each node's list order.
const (
	cacheMagic     = 0x8FE7832B
	cacheVersion   = 1
	cacheHeaderLen = 28
	cacheNodeLen   = 4 + mad.SMPDataLen + 10 + 2*mad.SMPDataLen + 1
	cacheKeyLen    = 9
	cachePortLen   = 13 + mad.SMPDataLen + 18
	cacheBuckets   = 137 // libibnetdisc's HTSZ
)

// cacheBucket is the port's bucket in libibnetdisc's hash tables (HASHGUID
// modulo HTSZ).
func cacheBucket(g rdma.GUID) int {
	v := uint64(g)
	return int((uint32(v)*101 ^ uint32(v>>32)*103) % cacheBuckets)
}

// WriteCache writes the fabric in libibnetdisc's cache format, version 1,
// byte for byte as rdma-core 44's ibnd_cache_fabric writes the same fabric,
// so that infiniband-diags can load it with --load-cache.
//
// Only ports whose PortInfo was read have a record, as only those are in
// libibnetdisc's port table. rdma-core 44 still lists the others in their
// node's port list, and links to them, which makes a file it cannot load;
// like later rdma-core, WriteCache leaves those references out.
//
// A discovered fabric (one with Visits) has its port records in the order
// libibnetdisc's walk would have added them to its port table; any other,
// read from a cache or from JSON, in the order ibnd_load_fabric adds them,
// which is what `ibnetdiscover --load-cache` followed by `--cache` writes.
func (f *Fabric) WriteCache(w io.Writer) error {
	if err := f.checkSerializable(); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if f.MaxHops < 0 || uint64(f.MaxHops) > math.MaxUint32 {
		return fmt.Errorf("cache: MaxHops %d out of range", f.MaxHops)
	}
	order := f.cacheOrder()
	stored := make(map[*Port]bool, len(order))
	keys := make(map[portKey]bool, len(order))
	for _, p := range order {
		k := portKey{p.GUID, uint8(p.Num)}
		if keys[k] {
			return fmt.Errorf("cache: two ports are %s", k)
		}
		keys[k] = true
		stored[p] = true
	}
	nodes := f.All()
	le := binary.LittleEndian
	b := make([]byte, 0, cacheHeaderLen+len(nodes)*cacheNodeLen+len(order)*(cacheKeyLen+cachePortLen))
	b = le.AppendUint32(b, cacheMagic)
	b = le.AppendUint32(b, cacheVersion)
	b = le.AppendUint32(b, uint32(len(nodes)))
	b = le.AppendUint32(b, uint32(len(order)))
	b = le.AppendUint64(b, uint64(f.From.GUID))
	b = le.AppendUint32(b, uint32(f.MaxHops))
	for _, n := range nodes {
		b = le.AppendUint16(b, uint16(n.SMALID))
		b = append(b, n.SMALMC, boolByte(n.EnhancedPort0))
		b = append(b, n.SwitchInfoRaw[:]...)
		b = le.AppendUint64(b, uint64(n.GUID))
		b = append(b, uint8(n.Type), uint8(n.NumPorts))
		b = append(b, n.InfoRaw[:]...)
		b = append(b, n.DescRaw[:]...)
		at := len(b)
		b = append(b, 0)
		count := 0
		for _, p := range n.Ports {
			if stored[p] {
				b = le.AppendUint64(b, uint64(p.GUID))
				b = append(b, uint8(p.Num))
				count++
			}
		}
		if count > math.MaxUint8 {
			return fmt.Errorf("cache: node %s has %d ports to list, more than the format's %d", n.GUID, count, math.MaxUint8)
		}
		b[at] = uint8(count)
	}
	var buckets [cacheBuckets][]*Port
	for i := len(order) - 1; i >= 0; i-- {
		p := order[i]
		h := cacheBucket(p.GUID)
		if p.tableGUID != 0 {
			// libibnetdisc's table keeps a port where its GUID was
			// when it went in (ibcacheedit changes GUIDs after).
			h = cacheBucket(p.tableGUID)
		}
		buckets[h] = append(buckets[h], p)
	}
	for _, bucket := range buckets {
		for _, p := range bucket {
			b = le.AppendUint64(b, uint64(p.GUID))
			b = append(b, uint8(p.Num), uint8(p.ExtNum))
			b = le.AppendUint16(b, uint16(p.BaseLID))
			b = append(b, p.LMC)
			b = append(b, p.InfoRaw[:]...)
			b = le.AppendUint64(b, uint64(p.Node.GUID))
			if r := p.Remote; stored[r] {
				b = append(b, 1)
				b = le.AppendUint64(b, uint64(r.GUID))
				b = append(b, uint8(r.Num))
			} else {
				b = append(b, make([]byte, 10)...)
			}
		}
	}
	_, err := w.Write(b)
	return err
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// cacheOrder returns the ports the cache records (those whose PortInfo was
// read) in the order libibnetdisc adds them to its port GUID table: for a
// discovered fabric the order the walk receives their PortInfo, then
// ibnd_load_fabric's order (nodes oldest first, ports by number) for the
// rest and for a fabric that was not discovered.
func (f *Fabric) cacheOrder() []*Port {
	var order []*Port
	added := make(map[*Port]bool)
	add := func(p *Port) {
		if p != nil && p.Info != nil && !added[p] {
			added[p] = true
			order = append(order, p)
		}
	}
	if len(f.Visits) > 0 {
		start := f.From.Path
		if len(start) == 0 {
			start = []uint8{0}
		}
		extInfo := false
		for _, n := range f.Nodes {
			for _, p := range n.Ports {
				if p != nil && p.ExtInfo != nil {
					extInfo = true
				}
			}
		}
		for _, p := range f.walkQueue(start, extInfo).ports {
			add(p)
		}
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			add(p)
		}
	}
	return order
}

// checkSerializable checks what both file formats rely on: a start node
// among the nodes, unique node GUIDs, port numbers that fit a byte, ports
// where their numbers say, and links that stay within the fabric.
func (f *Fabric) checkSerializable() error {
	if f.From == nil {
		return errors.New("the fabric has no From node")
	}
	member := make(map[*Node]bool, len(f.Nodes))
	for i, n := range f.Nodes {
		if n == nil {
			return fmt.Errorf("Nodes[%d] is nil", i)
		}
		if member[n] {
			return fmt.Errorf("node %s is in Nodes twice", n.GUID)
		}
		member[n] = true
	}
	guids := make(map[rdma.GUID]bool, len(f.Nodes))
	for _, n := range f.Nodes {
		if guids[n.GUID] {
			return fmt.Errorf("two nodes have GUID %s", n.GUID)
		}
		guids[n.GUID] = true
		if n.NumPorts < 0 || n.NumPorts > math.MaxUint8 {
			return fmt.Errorf("node %s: %d ports, out of range", n.GUID, n.NumPorts)
		}
		if len(n.Ports) > n.NumPorts+1 {
			return fmt.Errorf("node %s: %d entries in Ports for %d ports", n.GUID, len(n.Ports), n.NumPorts)
		}
		for num, p := range n.Ports {
			if p == nil {
				continue
			}
			if p.Node != n || p.Num != num {
				return fmt.Errorf("node %s: Ports[%d] holds port %d of node %s", n.GUID, num, p.Num, guidOf(p.Node))
			}
			if p.ExtNum < 0 || p.ExtNum > math.MaxUint8 {
				return fmt.Errorf("node %s port %d: external port number %d out of range", n.GUID, num, p.ExtNum)
			}
			if r := p.Remote; r != nil && (r.Node == nil || !member[r.Node] || r.Node.Port(r.Num) != r) {
				return fmt.Errorf("node %s port %d: linked to a port that is not in the fabric", n.GUID, num)
			}
		}
	}
	if !member[f.From] {
		return fmt.Errorf("the From node %s is not among the fabric's nodes", f.From.GUID)
	}
	if f.FromPort < 0 || f.FromPort > f.From.NumPorts {
		return fmt.Errorf("FromPort %d out of range for node %s's %d ports", f.FromPort, f.From.GUID, f.From.NumPorts)
	}
	return nil
}

func guidOf(n *Node) string {
	if n == nil {
		return "<nil>"
	}
	return n.GUID.String()
}

// ReadCache reads a libibnetdisc cache file, version 1, as rdma-core 44's
// ibnd_load_fabric does: Fabric.Nodes, and so All and ByType, come out in
// the order infiniband-diags run with --load-cache lists them. Node.Path,
// which the file does not hold, is the route libibnetdisc's walk from the
// start node's port would reach each node by (nil for a node it would not
// reach); FromPort is the LocalPortNum of the start node's NodeInfo.
//
// A file that is truncated, has bytes left over, or whose records do not
// fit together (a port listed but not recorded or recorded but not listed,
// a link to a port that is not in the file or not linked back, a GUID
// twice) is an error.
func ReadCache(r io.Reader) (*Fabric, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	f, err := parseCache(data)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return f, nil
}

// portKey is how the cache names a port.
type portKey struct {
	guid rdma.GUID
	num  uint8
}

// String names the port key in messages.
func (k portKey) String() string { return fmt.Sprintf("port (GUID %s, number %d)", k.guid, k.num) }

// portRecord is a port record and what it refers to.
type portRecord struct {
	port    *Port
	node    rdma.GUID
	linked  bool
	remote  portKey
	claimed bool
}

func parseCache(b []byte) (*Fabric, error) {
	le := binary.LittleEndian
	if len(b) >= 4 {
		if m := le.Uint32(b); m != cacheMagic {
			return nil, fmt.Errorf("bad magic %#08x, want %#08x: not a libibnetdisc cache file", m, cacheMagic)
		}
	}
	if len(b) >= 8 {
		if v := le.Uint32(b[4:]); v != cacheVersion {
			return nil, fmt.Errorf("version %d, only version %d is known", v, cacheVersion)
		}
	}
	if len(b) < cacheHeaderLen {
		return nil, fmt.Errorf("truncated header: %d of %d bytes", len(b), cacheHeaderLen)
	}
	nodeCount, portCount := le.Uint32(b[8:]), le.Uint32(b[12:])
	fromGUID := rdma.GUID(le.Uint64(b[16:]))
	maxHops := le.Uint32(b[24:])
	// The counts bound every allocation below by the file's size.
	rest := uint64(len(b) - cacheHeaderLen)
	if need := uint64(nodeCount)*cacheNodeLen + uint64(portCount)*cachePortLen; need > rest {
		return nil, fmt.Errorf("truncated: the header's %d nodes and %d ports take at least %d bytes after it, the file has %d",
			nodeCount, portCount, need, rest)
	}
	off := cacheHeaderLen

	nodes := make([]*Node, 0, nodeCount)
	keys := make([][]portKey, 0, nodeCount)
	byGUID := make(map[rdma.GUID]*Node, nodeCount)
	for i := range int(nodeCount) {
		if len(b)-off < cacheNodeLen {
			return nil, fmt.Errorf("truncated: node record %d of %d at offset %d", i+1, nodeCount, off)
		}
		r := b[off : off+cacheNodeLen]
		n := &Node{SMALID: rdma.LID(le.Uint16(r)), SMALMC: r[2], EnhancedPort0: r[3] != 0}
		copy(n.SwitchInfoRaw[:], r[4:])
		n.GUID = rdma.GUID(le.Uint64(r[68:]))
		n.Type = mad.NodeType(r[76])
		n.NumPorts = int(r[77])
		copy(n.InfoRaw[:], r[78:])
		copy(n.DescRaw[:], r[142:])
		count := int(r[206])
		off += cacheNodeLen
		if byGUID[n.GUID] != nil {
			return nil, fmt.Errorf("node record %d: node GUID %s is in the file twice", i+1, n.GUID)
		}
		byGUID[n.GUID] = n
		if len(b)-off < count*cacheKeyLen {
			return nil, fmt.Errorf("truncated: node %s's list of %d ports at offset %d", n.GUID, count, off)
		}
		ks := make([]portKey, count)
		var listed [256]bool
		for j := range ks {
			k := portKey{rdma.GUID(le.Uint64(b[off:])), b[off+8]}
			off += cacheKeyLen
			if int(k.num) > n.NumPorts {
				return nil, fmt.Errorf("node %s lists port number %d, beyond its %d ports", n.GUID, k.num, n.NumPorts)
			}
			if listed[k.num] {
				return nil, fmt.Errorf("node %s lists port number %d twice", n.GUID, k.num)
			}
			listed[k.num] = true
			ks[j] = k
		}
		nodes = append(nodes, n)
		keys = append(keys, ks)
	}

	records := make([]*portRecord, 0, portCount)
	byKey := make(map[portKey]*portRecord, portCount)
	for i := range int(portCount) {
		if len(b)-off < cachePortLen {
			return nil, fmt.Errorf("truncated: port record %d of %d at offset %d", i+1, portCount, off)
		}
		r := b[off : off+cachePortLen]
		k := portKey{rdma.GUID(le.Uint64(r)), r[8]}
		p := &Port{GUID: k.guid, Num: int(k.num), ExtNum: int(r[9]), BaseLID: rdma.LID(le.Uint16(r[10:])), LMC: r[12], tableGUID: k.guid}
		copy(p.InfoRaw[:], r[13:])
		p.Info = new(mad.PortInfo)
		p.Info.UnmarshalBinary(p.InfoRaw[:])
		rec := &portRecord{port: p, node: rdma.GUID(le.Uint64(r[77:])), linked: r[85] != 0,
			remote: portKey{rdma.GUID(le.Uint64(r[86:])), r[94]}}
		if byKey[k] != nil {
			return nil, fmt.Errorf("port record %d: %s is recorded twice", i+1, k)
		}
		byKey[k] = rec
		records = append(records, rec)
		off += cachePortLen
	}
	if off != len(b) {
		return nil, fmt.Errorf("%d bytes after the last port record (offset %d)", len(b)-off, off)
	}

	from := byGUID[fromGUID]
	if from == nil {
		return nil, fmt.Errorf("the start node %s is not in the file", fromGUID)
	}
	for i, n := range nodes {
		n.Ports = make([]*Port, n.NumPorts+1)
		for _, k := range keys[i] {
			rec := byKey[k]
			if rec == nil {
				return nil, fmt.Errorf("node %s lists %s, which has no port record", n.GUID, k)
			}
			if rec.claimed {
				return nil, fmt.Errorf("%s is listed by two nodes", k)
			}
			if rec.node != n.GUID {
				return nil, fmt.Errorf("node %s lists %s, whose record puts it on node %s", n.GUID, k, rec.node)
			}
			rec.claimed = true
			rec.port.Node = n
			n.Ports[k.num] = rec.port
		}
	}
	for _, rec := range records {
		k := portKey{rec.port.GUID, uint8(rec.port.Num)}
		if !rec.claimed {
			return nil, fmt.Errorf("%s of node %s is in no node's port list", k, rec.node)
		}
		if rec.linked {
			r := byKey[rec.remote]
			if r == nil {
				return nil, fmt.Errorf("%s links to %s, which has no port record", k, rec.remote)
			}
			rec.port.Remote = r.port
		}
	}
	for _, rec := range records {
		p, r := rec.port, rec.port.Remote
		switch {
		case r == nil:
		case r == p:
			return nil, fmt.Errorf("%s links to itself", portKey{p.GUID, uint8(p.Num)})
		case r.Remote == nil:
			return nil, fmt.Errorf("%s links to %s, which links to nothing", portKey{p.GUID, uint8(p.Num)}, rec.remote)
		case r.Remote != p:
			return nil, fmt.Errorf("%s links to %s, which links to %s", portKey{p.GUID, uint8(p.Num)}, rec.remote,
				portKey{r.Remote.GUID, uint8(r.Remote.Num)})
		}
	}

	f := &Fabric{From: from, MaxHops: int(maxHops)}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		n.finishLoad(false)
		f.Nodes = append(f.Nodes, n)
	}
	if lp := int(from.Info.LocalPortNum); lp <= from.NumPorts {
		f.FromPort = lp
	}
	paths := f.walkQueue([]uint8{0}, false).paths
	for n, p := range paths {
		n.Path = slices.Clone(p)
	}
	f.index()
	return f, nil
}

// finishLoad decodes a loaded node's raw attributes. A switch's SwitchInfo
// is decoded when its raw bytes are there (or, from JSON, when given).
func (n *Node) finishLoad(switchInfo bool) {
	n.Info.UnmarshalBinary(n.InfoRaw[:])
	n.entry = n.Info.LocalPortNum
	n.Desc = nodeDesc(n.DescRaw[:])
	if n.Type == mad.NodeTypeSwitch && (switchInfo || !allZero(n.SwitchInfoRaw[:])) {
		n.SwitchInfo = new(mad.SwitchInfo)
		n.SwitchInfo.UnmarshalBinary(n.SwitchInfoRaw[:])
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// fabricJSON is the JSON form of a fabric: the cache's data, the routes,
// the start port and MlnxExtPortInfo.
type fabricJSON struct {
	Version  int        `json:"version"`
	FromNode rdma.GUID  `json:"fromNode"`
	FromPort int        `json:"fromPort"`
	MaxHops  int        `json:"maxHops"`
	Nodes    []nodeJSON `json:"nodes"`
}

type nodeJSON struct {
	GUID          rdma.GUID  `json:"nodeGUID"`
	Type          string     `json:"type"`
	NumPorts      int        `json:"numPorts"`
	Description   string     `json:"description"`
	Path          string     `json:"path,omitempty"`
	SMALID        rdma.LID   `json:"smaLID"`
	SMALMC        uint8      `json:"smaLMC"`
	EnhancedPort0 bool       `json:"enhancedPort0"`
	NodeInfo      string     `json:"nodeInfo"`
	NodeDesc      string     `json:"nodeDescription"`
	SwitchInfo    string     `json:"switchInfo,omitempty"`
	Ports         []portJSON `json:"ports"`
}

type portJSON struct {
	Num      int       `json:"port"`
	GUID     rdma.GUID `json:"portGUID"`
	ExtNum   int       `json:"extPort,omitempty"`
	LID      rdma.LID  `json:"lid"`
	LMC      uint8     `json:"lmc"`
	PortInfo string    `json:"portInfo,omitempty"`
	ExtInfo  string    `json:"mlnxExtPortInfo,omitempty"`
	Remote   *linkJSON `json:"remote,omitempty"`
}

type linkJSON struct {
	Node rdma.GUID `json:"nodeGUID"`
	Port int       `json:"port"`
}

const jsonVersion = 1

// WriteJSON writes the fabric as JSON: the start node and port, MaxHops,
// and the nodes in Nodes order, each with its GUID, type, description,
// route ("0,1,3"), SMA LID and LMC, raw NodeInfo, NodeDescription and
// SwitchInfo, and its ports with GUID, external number, LID, LMC, raw
// PortInfo and MlnxExtPortInfo and the remote port as node GUID and port
// number. Raw attributes are hex without their trailing zero bytes; one
// that was not read is left out. The description is for people: ReadJSON
// takes it from the raw NodeDescription. ReadJSON gives the fabric back as
// it was, but for MADs, Errors, Visits and Chassis.
func (f *Fabric) WriteJSON(w io.Writer) error {
	if err := f.checkSerializable(); err != nil {
		return fmt.Errorf("fabric JSON: %w", err)
	}
	doc := fabricJSON{Version: jsonVersion, FromNode: f.From.GUID, FromPort: f.FromPort, MaxHops: f.MaxHops,
		Nodes: make([]nodeJSON, 0, len(f.Nodes))}
	for _, n := range f.Nodes {
		nj := nodeJSON{GUID: n.GUID, Type: typeName(n.Type), NumPorts: n.NumPorts, Description: n.Desc,
			SMALID: n.SMALID, SMALMC: n.SMALMC, EnhancedPort0: n.EnhancedPort0,
			NodeInfo: rawHex(n.InfoRaw[:]), NodeDesc: rawHex(n.DescRaw[:]),
			SwitchInfo: optHex(n.SwitchInfoRaw[:], n.SwitchInfo != nil), Ports: []portJSON{}}
		if len(n.Path) > 0 {
			nj.Path = FormatPath(n.Path)
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			pj := portJSON{Num: p.Num, GUID: p.GUID, ExtNum: p.ExtNum, LID: p.BaseLID, LMC: p.LMC,
				PortInfo: optHex(p.InfoRaw[:], p.Info != nil), ExtInfo: optHex(p.extRaw(), p.ExtInfo != nil)}
			if r := p.Remote; r != nil {
				pj.Remote = &linkJSON{Node: r.Node.GUID, Port: r.Num}
			}
			nj.Ports = append(nj.Ports, pj)
		}
		doc.Nodes = append(doc.Nodes, nj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// ReadJSON reads a fabric WriteJSON wrote. Unknown fields, a second
// document, and data that do not fit together (a port beyond its node's
// ports, a link to a port that is not there or not linked back, a GUID
// twice) are errors.
func ReadJSON(r io.Reader) (*Fabric, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var doc fabricJSON
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("fabric JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("fabric JSON: data after the fabric")
	}
	f, err := doc.fabric()
	if err != nil {
		return nil, fmt.Errorf("fabric JSON: %w", err)
	}
	return f, nil
}

func (doc *fabricJSON) fabric() (*Fabric, error) {
	if doc.Version != jsonVersion {
		return nil, fmt.Errorf("version %d, only version %d is known", doc.Version, jsonVersion)
	}
	if doc.MaxHops < 0 {
		return nil, fmt.Errorf("maxHops %d is negative", doc.MaxHops)
	}
	f := &Fabric{MaxHops: doc.MaxHops, Nodes: make([]*Node, 0, len(doc.Nodes))}
	byGUID := make(map[rdma.GUID]*Node, len(doc.Nodes))
	for _, nj := range doc.Nodes {
		n, err := nj.node()
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", nj.GUID, err)
		}
		if byGUID[n.GUID] != nil {
			return nil, fmt.Errorf("node %s is there twice", n.GUID)
		}
		byGUID[n.GUID] = n
		f.Nodes = append(f.Nodes, n)
	}
	for i, nj := range doc.Nodes {
		n := f.Nodes[i]
		for _, pj := range nj.Ports {
			if pj.Remote == nil {
				continue
			}
			p := n.Ports[pj.Num]
			rn := byGUID[pj.Remote.Node]
			if rn == nil {
				return nil, fmt.Errorf("node %s port %d: remote node %s is not in the fabric", n.GUID, p.Num, pj.Remote.Node)
			}
			r := rn.Port(pj.Remote.Port)
			if r == nil {
				return nil, fmt.Errorf("node %s port %d: remote node %s has no port %d", n.GUID, p.Num, rn.GUID, pj.Remote.Port)
			}
			p.Remote = r
		}
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			if r := p.Remote; r == p || r.Remote != p {
				return nil, fmt.Errorf("node %s port %d links to node %s port %d, which does not link back",
					n.GUID, p.Num, r.Node.GUID, r.Num)
			}
		}
	}
	if f.From = byGUID[doc.FromNode]; f.From == nil {
		return nil, fmt.Errorf("fromNode %s is not in the fabric", doc.FromNode)
	}
	if doc.FromPort < 0 || doc.FromPort > f.From.NumPorts {
		return nil, fmt.Errorf("fromPort %d out of range for node %s's %d ports", doc.FromPort, f.From.GUID, f.From.NumPorts)
	}
	f.FromPort = doc.FromPort
	f.index()
	return f, nil
}

func (nj *nodeJSON) node() (*Node, error) {
	t, err := parseTypeName(nj.Type)
	if err != nil {
		return nil, err
	}
	if nj.NumPorts < 0 || nj.NumPorts > math.MaxUint8 {
		return nil, fmt.Errorf("numPorts %d out of range", nj.NumPorts)
	}
	n := &Node{GUID: nj.GUID, Type: t, NumPorts: nj.NumPorts, SMALID: nj.SMALID, SMALMC: nj.SMALMC,
		EnhancedPort0: nj.EnhancedPort0, Ports: make([]*Port, nj.NumPorts+1)}
	if n.Path, err = parsePath(nj.Path); err != nil {
		return nil, err
	}
	if err := parseRaw("nodeInfo", nj.NodeInfo, &n.InfoRaw); err != nil {
		return nil, err
	}
	if err := parseRaw("nodeDescription", nj.NodeDesc, &n.DescRaw); err != nil {
		return nil, err
	}
	if err := parseRaw("switchInfo", nj.SwitchInfo, &n.SwitchInfoRaw); err != nil {
		return nil, err
	}
	n.finishLoad(nj.SwitchInfo != "")
	for _, pj := range nj.Ports {
		if pj.Num < 0 || pj.Num > n.NumPorts {
			return nil, fmt.Errorf("port %d out of range for %d ports", pj.Num, n.NumPorts)
		}
		if n.Ports[pj.Num] != nil {
			return nil, fmt.Errorf("port %d is there twice", pj.Num)
		}
		if pj.ExtNum < 0 || pj.ExtNum > math.MaxUint8 {
			return nil, fmt.Errorf("port %d: extPort %d out of range", pj.Num, pj.ExtNum)
		}
		p := &Port{Node: n, Num: pj.Num, GUID: pj.GUID, ExtNum: pj.ExtNum, BaseLID: pj.LID, LMC: pj.LMC}
		if err := parseRaw("portInfo", pj.PortInfo, &p.InfoRaw); err != nil {
			return nil, fmt.Errorf("port %d: %w", pj.Num, err)
		}
		if pj.PortInfo != "" {
			p.Info = new(mad.PortInfo)
			p.Info.UnmarshalBinary(p.InfoRaw[:])
		}
		if pj.ExtInfo != "" {
			raw := new([mad.SMPDataLen]byte)
			if err := parseRaw("mlnxExtPortInfo", pj.ExtInfo, raw); err != nil {
				return nil, fmt.Errorf("port %d: %w", pj.Num, err)
			}
			p.ExtInfo, p.ExtInfoRaw = new(mad.MlnxExtPortInfo), raw
			p.ExtInfo.UnmarshalBinary(raw[:])
		}
		n.Ports[pj.Num] = p
	}
	return n, nil
}

// typeName names a node type in JSON: CA, Switch, Router, or the number.
func typeName(t mad.NodeType) string {
	if s := t.Abbrev(); s != "" {
		return s
	}
	return strconv.Itoa(int(t))
}

func parseTypeName(s string) (mad.NodeType, error) {
	for _, t := range []mad.NodeType{mad.NodeTypeCA, mad.NodeTypeSwitch, mad.NodeTypeRouter} {
		if s == t.Abbrev() {
			return t, nil
		}
	}
	v, err := strconv.ParseUint(s, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("type %q: want CA, Switch, Router or a number up to 255", s)
	}
	return mad.NodeType(v), nil
}

// parsePath reads a route FormatPath wrote; "" is no route.
func parsePath(s string) ([]uint8, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) > mad.MaxHops {
		return nil, fmt.Errorf("path %q: more than %d entries", s, mad.MaxHops)
	}
	path := make([]uint8, len(parts))
	for i, h := range parts {
		v, err := strconv.ParseUint(h, 10, 8)
		if err != nil {
			return nil, fmt.Errorf("path %q: want port numbers 0-255 separated by commas", s)
		}
		path[i] = uint8(v)
	}
	return path, nil
}

// rawHex is the hex of an attribute without its trailing zero bytes.
func rawHex(b []byte) string {
	end := len(b)
	for end > 0 && b[end-1] == 0 {
		end--
	}
	return hex.EncodeToString(b[:end])
}

// optHex is rawHex of an attribute that may not have been read: "" when
// it was not (and its bytes are all zero), at least "00" when it was.
func optHex(b []byte, read bool) string {
	s := rawHex(b)
	if s == "" && read {
		s = "00"
	}
	return s
}

// extRaw is the port's MlnxExtPortInfo as received, nil when not read.
func (p *Port) extRaw() []byte {
	if p.ExtInfoRaw == nil {
		return nil
	}
	return p.ExtInfoRaw[:]
}

// parseRaw reads rawHex's hex into out.
func parseRaw(field, s string, out *[mad.SMPDataLen]byte) error {
	if len(s) > 2*mad.SMPDataLen {
		return fmt.Errorf("%s: %d hex digits, more than %d bytes", field, len(s), mad.SMPDataLen)
	}
	v, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	*out = [mad.SMPDataLen]byte{}
	copy(out[:], v)
	return nil
}
