package subnet

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Node is one node of the fabric: a CA, switch or router.
type Node struct {
	GUID     rdma.GUID
	Type     mad.NodeType
	NumPorts int
	// Info is the NodeInfo of the first time the node was reached; for a
	// CA its PortGUID and LocalPortNum are those of that port. InfoRaw
	// is the same as received (the SMP data area), which the cache keeps.
	Info    mad.NodeInfo
	InfoRaw [mad.SMPDataLen]byte
	// Desc is the NodeDescription, up to its first NUL; DescRaw holds
	// all 64 bytes.
	Desc    string
	DescRaw [mad.SMPDataLen]byte
	// SwitchInfo is a switch's SwitchInfo, nil for other nodes or when
	// it could not be read.
	SwitchInfo    *mad.SwitchInfo
	SwitchInfoRaw [mad.SMPDataLen]byte
	// SMALID and SMALMC are the LID and LMC of a switch's port 0; for a
	// CA they are 0.
	SMALID rdma.LID
	SMALMC uint8
	// EnhancedPort0 is SwitchInfo's EnhancedPort0.
	EnhancedPort0 bool
	// Ports holds ports 0..NumPorts by number; nil where the port was
	// never seen (a CA's ports other than the ones reached).
	Ports []*Port
	// Path is the directed route from the local port to this node, the
	// one libibnetdisc would have found it by.
	Path []uint8
	// Chassis is the chassis the node belongs to, 0 for none.
	Chassis int

	// entry is the port the first NodeInfo arrived on; the discovery's
	// PortInfo of a switch all arrive there.
	entry uint8
}

// Port is one port of a node.
type Port struct {
	Node *Node
	Num  int
	// GUID is the port GUID: a switch's ports all share the node's
	// port GUID (that of port 0).
	GUID rdma.GUID
	// Info is the PortInfo, nil when it was never read; InfoRaw is the
	// same as received.
	Info    *mad.PortInfo
	InfoRaw [mad.SMPDataLen]byte
	// ExtInfo is Mellanox's MlnxExtPortInfo where it was read (QDR
	// links of Mellanox devices, to tell FDR10), nil otherwise;
	// ExtInfoRaw is the same as received. (Kept apart from the port,
	// which most fabrics never need it on.)
	ExtInfo    *mad.MlnxExtPortInfo
	ExtInfoRaw *[mad.SMPDataLen]byte
	// BaseLID and LMC are the port's LIDs: for a switch's ports those
	// of port 0.
	BaseLID rdma.LID
	LMC     uint8
	// Remote is the port at the other end of the link, nil when none
	// was found.
	Remote *Port
	// ExtNum is the external port number on a chassis's front panel,
	// 0 when not known.
	ExtNum int

	// tableGUID is the GUID a port loaded from a cache had there: the
	// bucket of libibnetdisc's port table it stays in when the GUID is
	// edited afterwards. 0 for a discovered port.
	tableGUID rdma.GUID
}

// Fabric is a discovered (or loaded) subnet.
type Fabric struct {
	// Nodes are the nodes in libibnetdisc's order of discovery: Nodes[0]
	// is the node discovery started from.
	Nodes []*Node
	// From is the node discovery started at and FromPort its port.
	From     *Node
	FromPort int
	// MaxHops is the largest number of hops libibnetdisc's walk would
	// have used (what ibnetdiscover -m reports).
	MaxHops int
	// MADs is how many SMPs discovery sent, retries not counted.
	MADs int
	// LIDFallbacks is how many LID-routed SMPs failed and were sent
	// again by directed route (Options.LIDRouted).
	LIDFallbacks int
	// Errors are the queries that failed; when there are any, the
	// fabric is partial.
	Errors []*QueryError
	// Visits are the NodeInfo answers in libibnetdisc's order, what
	// ibnetdiscover -s prints as it goes.
	Visits []Visit

	// noPortInfo is set when the ports were built without their
	// PortInfo (SAOptions.NoPortInfo).
	noPortInfo bool

	byGUID     map[rdma.GUID]*Node
	portByGUID map[rdma.GUID]*Port
	portByLID  map[rdma.LID]*Port
}

// Visit is one NodeInfo answer of libibnetdisc's walk: the path asked, the
// node and port that answered, and what was known of them at the time.
type Visit struct {
	Path  []uint8
	Node  *Node
	Desc  string
	Port  int
	LID   rdma.LID
	LMC   uint8
	New   bool
	Known bool // Desc, LID and LMC were known (else zero and empty)
}

// QueryError is a query discovery could not complete.
type QueryError struct {
	// Query names the attribute asked: "NodeInfo", "PortInfo".
	Query string
	// Path is where it was sent.
	Path []uint8
	// Node is the node asked, nil for a NodeInfo through a link whose
	// far end is unknown; Port is the port concerned (the port the link
	// leaves by, for NodeInfo), 0 when none.
	Node *Node
	Port int
	Err  error
}

// Error says which query failed, where, about which node and port, and why.
func (e *QueryError) Error() string {
	var b strings.Builder
	b.WriteString(e.Query)
	b.WriteString(" at DR path ")
	b.WriteString(FormatPath(e.Path))
	if e.Node != nil {
		fmt.Fprintf(&b, " (%s %s", e.Node.GUID, strconv.Quote(e.Node.Desc))
		if e.Port > 0 {
			fmt.Fprintf(&b, " port %d", e.Port)
		}
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(reason(e.Err))
	return b.String()
}

// reason is what went wrong in err, without the request and route that
// QueryError already names.
func reason(err error) string {
	var te *madrpc.TimeoutError
	var se *madrpc.StatusError
	var re *madrpc.ReplyError
	switch {
	case errors.As(err, &te):
		tries := "1 try"
		if te.Tries != 1 {
			tries = fmt.Sprintf("%d tries", te.Tries)
		}
		return fmt.Sprintf("no response after %s (%v)", tries, te.Elapsed.Round(time.Millisecond))
	case errors.As(err, &se):
		return fmt.Sprintf("MAD status 0x%04x: %s", uint16(se.Status), se.Status)
	case errors.As(err, &re):
		return "bad response: " + re.Reason
	}
	return err.Error()
}

// Unwrap returns the transactor's error.
func (e *QueryError) Unwrap() error { return e.Err }

// SetSystemImageGUID changes the node's SystemImageGUID, in Info and in
// the raw NodeInfo the cache keeps.
func (n *Node) SetSystemImageGUID(g rdma.GUID) {
	n.Info.SystemImageGUID = g
	n.Info.AppendBinary(n.InfoRaw[:0])
}

// FormatPath prints a directed route as "0,1,3".
func FormatPath(p []uint8) string {
	if len(p) == 0 {
		return "0"
	}
	b := make([]byte, 0, 4*len(p))
	for i, h := range p {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(h), 10)
	}
	return string(b)
}

// newFabric returns an empty fabric.
func newFabric() *Fabric {
	return &Fabric{byGUID: make(map[rdma.GUID]*Node), portByGUID: make(map[rdma.GUID]*Port)}
}

// NodeByGUID returns the node with the GUID, or nil.
func (f *Fabric) NodeByGUID(g rdma.GUID) *Node { return f.byGUID[g] }

// PortByGUID returns the port with the GUID (for a switch, port 0), or nil.
func (f *Fabric) PortByGUID(g rdma.GUID) *Port { return f.portByGUID[g] }

// PortByLID returns the port whose LID range holds lid (for a switch, port
// 0), or nil.
func (f *Fabric) PortByLID(lid rdma.LID) *Port { return f.portByLID[lid] }

// Partial reports whether some query failed.
func (f *Fabric) Partial() bool { return len(f.Errors) > 0 }

// ByType returns the nodes of type t in the order libibnetdisc lists them:
// the most recently discovered first.
func (f *Fabric) ByType(t mad.NodeType) []*Node {
	var out []*Node
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		if f.Nodes[i].Type == t {
			out = append(out, f.Nodes[i])
		}
	}
	return out
}

// All returns every node in the order libibnetdisc's ibnd_iter_nodes
// visits them: the most recently discovered first.
func (f *Fabric) All() []*Node {
	out := make([]*Node, len(f.Nodes))
	for i, n := range f.Nodes {
		out[len(out)-1-i] = n
	}
	return out
}

// Port returns port n of the node, or nil.
func (n *Node) Port(num int) *Port {
	if num < 0 || num >= len(n.Ports) {
		return nil
	}
	return n.Ports[num]
}

// port returns port num, making it if it is not there yet.
func (n *Node) port(num int) *Port {
	if p := n.Ports[num]; p != nil {
		return p
	}
	p := new(Port)
	*p = n.newPort(num)
	n.Ports[num] = p
	return p
}

// newPort is port num of n as first seen: a switch's ports carry the
// node's port GUID.
func (n *Node) newPort(num int) Port {
	p := Port{Node: n, Num: num}
	if n.Type == mad.NodeTypeSwitch {
		p.GUID = n.Info.PortGUID
	}
	return p
}

// capMask returns the port's PortInfo CapabilityMask as libibnetdisc reads
// it: for a switch, that of port 0.
func (p *Port) capMask() uint32 {
	q := p
	if p.Node.Type == mad.NodeTypeSwitch {
		q = p.Node.Ports[0]
	}
	if q == nil || q.Info == nil {
		return 0
	}
	return q.Info.CapabilityMask
}

// LinkSpeedExtActive returns the port's LinkSpeedExtActive where the
// capability mask says it is valid, 0 otherwise.
func (p *Port) LinkSpeedExtActive() mad.LinkSpeedExt {
	if p.Info == nil || p.capMask()&mad.PortCapIsExtendedSpeedsSupported == 0 {
		return 0
	}
	return p.Info.LinkSpeedExtActive
}

// HasCapMask reports whether the port's capability mask can be read (a
// switch port needs port 0's PortInfo).
func (p *Port) HasCapMask() bool {
	q := p
	if p.Node.Type == mad.NodeTypeSwitch {
		q = p.Node.Ports[0]
	}
	return q != nil && q.Info != nil
}

// LID returns the LID the C tools print for the port's node: a switch's
// port 0 LID, or the port's base LID.
func (p *Port) LID() rdma.LID {
	if p.Node.Type == mad.NodeTypeSwitch {
		return p.Node.SMALID
	}
	return p.BaseLID
}

// nodeDesc returns the description in 64 bytes of NodeDescription data, up
// to the first NUL.
func nodeDesc(raw []byte) string {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	return string(raw)
}

// link joins two ports, first unjoining whatever either was joined to.
func link(a, b *Port) {
	if a.Remote != nil {
		a.Remote.Remote = nil
	}
	if b.Remote != nil {
		b.Remote.Remote = nil
	}
	a.Remote, b.Remote = b, a
}
