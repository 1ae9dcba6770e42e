package sa

import (
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// mcMemberRecord is an MCMemberRecord (IBA 15.2.5.17).
type mcMemberRecord struct {
	MGID      rdma.GID `json:"mgid"`
	PortGID   rdma.GID `json:"portGID"`
	QKey      uint32   `json:"qKey"`
	MLID      uint16   `json:"mlid"`
	MTU       uint8    `json:"mtu"`
	TClass    uint8    `json:"tClass"`
	PKey      uint16   `json:"pKey"`
	Rate      uint8    `json:"rate"`
	PktLife   uint8    `json:"packetLifeTime"`
	SL        uint8    `json:"sl"`
	FlowLabel uint32   `json:"flowLabel"`
	HopLimit  uint8    `json:"hopLimit"`
	Scope     uint8    `json:"scope"`
	JoinState uint8    `json:"joinState"`
	ProxyJoin uint8    `json:"proxyJoin"`
}

func newMCMemberRecord(b []byte) *mcMemberRecord {
	r := decodeSARecord[mad.MCMemberRecord](b)
	return &mcMemberRecord{MGID: r.MGID, PortGID: r.PortGID, QKey: r.QKey, MLID: r.MLID,
		MTU: selected(r.MTUSelector, r.MTU), TClass: r.TClass, PKey: r.PKey, Rate: selected(r.RateSelector, r.Rate),
		PktLife: selected(r.PacketLifeTimeSelector, r.PacketLifeTime), SL: r.SL, FlowLabel: r.FlowLabel,
		HopLimit: r.HopLimit, Scope: r.Scope, JoinState: r.JoinState, ProxyJoin: r.ProxyJoin}
}

// scopeState is the byte Scope and JoinState share, as -m prints it.
func (r *mcMemberRecord) scopeState() uint8 { return r.Scope<<4 | r.JoinState }

func (r *mcMemberRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "MCMember Record dump:\n"+
		"\t\tMGID....................%s\n"+
		"\t\tPortGid.................%s\n"+
		"\t\tqkey....................0x%x\n"+
		"\t\tmlid....................0x%x\n"+
		"\t\tmtu.....................0x%x\n"+
		"\t\tTClass..................0x%x\n"+
		"\t\tpkey....................0x%x\n"+
		"\t\trate....................0x%x\n"+
		"\t\tpkt_life................0x%x\n"+
		"\t\tSL......................0x%x\n"+
		"\t\tFlowLabel...............0x%x\n"+
		"\t\tHopLimit................0x%x\n"+
		"\t\tScope...................0x%x\n"+
		"\t\tJoinState...............0x%x\n"+
		"\t\tProxyJoin...............0x%x\n",
		r.MGID, r.PortGID, r.QKey, r.MLID, r.MTU, r.TClass, r.PKey, r.Rate, r.PktLife, r.SL,
		r.FlowLabel, r.HopLimit, r.Scope, r.JoinState, r.ProxyJoin)
}

// mcGroupText is saquery -g's form of an MCMemberRecord; its JSON is the
// record's.
type mcGroupText struct{ *mcMemberRecord }

func (r mcGroupText) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "MCMemberRecord group dump:\n"+
		"\t\tMGID....................%s\n"+
		"\t\tMlid....................0x%X\n"+
		"\t\tMtu.....................0x%X\n"+
		"\t\tpkey....................0x%X\n"+
		"\t\tRate....................0x%X\n"+
		"\t\tSL......................0x%X\n",
		r.MGID, r.MLID, r.MTU, r.PKey, r.Rate, r.SL)
}

// serviceRecord is a ServiceRecord (IBA 15.2.5.14).
type serviceRecord struct {
	ServiceID    uint64   `json:"serviceID"`
	ServiceGID   rdma.GID `json:"serviceGID"`
	ServicePKey  uint16   `json:"servicePKey"`
	ServiceLease uint32   `json:"serviceLease"`
	ServiceKey   [16]byte `json:"-"`
	ServiceName  string   `json:"serviceName"`
	Data8        []uint64 `json:"serviceData8"`
	Data16       []uint64 `json:"serviceData16"`
	Data32       []uint64 `json:"serviceData32"`
	Data64       []uint64 `json:"serviceData64"`
}

func newServiceRecord(b []byte) *serviceRecord {
	r := decodeSARecord[mad.ServiceRecord](b)
	return &serviceRecord{ServiceID: r.ServiceID, ServiceGID: r.ServiceGID, ServicePKey: r.ServicePKey,
		ServiceLease: r.ServiceLease, ServiceKey: r.ServiceKey, ServiceName: r.ServiceName.String(),
		Data8: r.ServiceData(8), Data16: r.ServiceData(16), Data32: r.ServiceData(32), Data64: r.ServiceData(64)}
}

func (r *serviceRecord) writeText(w io.Writer, t *saText) {
	key := fmt.Sprintf("0x%x", r.ServiceKey[:])
	fmt.Fprintf(w, "ServiceRecord dump:\n"+
		"\t\tServiceID...............0x%016x\n"+
		"\t\tServiceGID..............%s\n"+
		"\t\tServiceP_Key............0x%X\n"+
		"\t\tServiceLease............0x%X\n"+
		"\t\tServiceKey..............%s\n"+
		"\t\tServiceName.............%s\n",
		r.ServiceID, r.ServiceGID, r.ServicePKey, r.ServiceLease, t.keyText(key), r.ServiceName)
	for _, d := range []struct {
		bits   int
		format string
		values []uint64
	}{{8, "0x%X", r.Data8}, {16, "0x%X", r.Data16}, {32, "0x%X", r.Data32}, {64, "0x%016x", r.Data64}} {
		for i, v := range d.values {
			fmt.Fprintf(w, "\t\t%s"+d.format+"\n", dotted(fmt.Sprintf("ServiceData%d.%d", d.bits, i+1), 24), v)
		}
	}
}

// dotted pads a label with dots to width.
func dotted(label string, width int) string {
	if len(label) >= width {
		return label
	}
	return label + strings.Repeat(".", width-len(label))
}

// smInfoRecord is an SMInfoRecord (IBA 15.2.5.13).
type smInfoRecord struct {
	LID      uint16 `json:"lid"`
	GUID     uint64 `json:"guid"`
	SMKey    uint64 `json:"smKey"`
	ActCount uint32 `json:"actCount"`
	Priority uint8  `json:"priority"`
	SMState  uint8  `json:"smState"`
}

func newSMInfoRecord(b []byte) *smInfoRecord {
	r := decodeSARecord[mad.SMInfoRecord](b)
	s := &r.SMInfo
	return &smInfoRecord{LID: r.LID, GUID: uint64(s.GUID), SMKey: s.SMKey, ActCount: s.ActCount, Priority: s.Priority, SMState: s.SMState}
}

func (r *smInfoRecord) writeText(w io.Writer, _ *saText) {
	// saquery prints the SM_Key whether or not -K is given.
	fmt.Fprintf(w, "SMInfoRecord dump:\n"+
		"\t\tRID\n"+
		"\t\tLID...................%d\n"+
		"\t\tSMInfo dump:\n"+
		"\t\tGUID..................0x%016x\n"+
		"\t\tSM_Key................0x%016x\n"+
		"\t\tActCount..............%d\n"+
		"\t\tPriority..............%d\n"+
		"\t\tSMState...............%d\n",
		r.LID, r.GUID, r.SMKey, r.ActCount, r.Priority, r.SMState)
}

// switchInfoRecord is a SwitchInfoRecord (IBA 15.2.5.4), the bytes that
// pack several fields as saquery's C struct holds them.
type switchInfoRecord struct {
	LID                   uint16 `json:"lid"`
	LinearFDBCap          uint16 `json:"linearFDBCap"`
	RandomFDBCap          uint16 `json:"randomFDBCap"`
	MulticastFDBCap       uint16 `json:"multicastFDBCap"`
	LinearFDBTop          uint16 `json:"linearFDBTop"`
	DefaultPort           uint8  `json:"defaultPort"`
	DefaultMcastPrimary   uint8  `json:"defaultMulticastPrimaryPort"`
	DefaultMcastNotPrim   uint8  `json:"defaultMulticastNotPrimaryPort"`
	LifeStateOptSL2VL     uint8  `json:"lifeTimePortStateChangeOptSL2VL"`
	LIDsPerPort           uint16 `json:"lidsPerPort"`
	PartitionEnforcingCap uint16 `json:"partitionEnforcementCap"`
	Flags                 uint8  `json:"flags"`
	MulticastFDBTop       uint16 `json:"multicastFDBTop"`
}

func newSwitchInfoRecord(b []byte) *switchInfoRecord {
	r := decodeSARecord[mad.SwitchInfoRecord](b)
	s := &r.SwitchInfo
	return &switchInfoRecord{LID: r.LID, LinearFDBCap: s.LinearFDBCap, RandomFDBCap: s.RandomFDBCap,
		MulticastFDBCap: s.MulticastFDBCap, LinearFDBTop: s.LinearFDBTop, DefaultPort: s.DefaultPort,
		DefaultMcastPrimary: s.DefaultMulticastPrimaryPort, DefaultMcastNotPrim: s.DefaultMulticastNotPrimaryPort,
		LifeStateOptSL2VL: s.LifeTimeValue<<3 | s.PortStateChange<<2 | s.OptimizedSLtoVLMappingProgramming,
		LIDsPerPort:       s.LIDsPerPort, PartitionEnforcingCap: s.PartitionEnforcementCap,
		Flags: s.InboundEnforcementCap<<7 | s.OutboundEnforcementCap<<6 | s.FilterRawInboundCap<<5 |
			s.FilterRawOutboundCap<<4 | s.EnhancedPort0<<3,
		MulticastFDBTop: s.MulticastFDBTop}
}

// saCapMask2McastTop is the SA's CapabilityMask2 bit saying SwitchInfo
// records carry MulticastFDBTop.
const saCapMask2McastTop = 1 << 3

func (r *switchInfoRecord) writeText(w io.Writer, t *saText) {
	fmt.Fprintf(w, "SwitchInfoRecord dump:\n"+
		"\t\tRID\n"+
		"\t\tLID.....................................%d\n"+
		"\t\tSwitchInfo dump:\n"+
		"\t\tLinearFDBCap............................0x%X\n"+
		"\t\tRandomFDBCap............................0x%X\n"+
		"\t\tMulticastFDBCap.........................0x%X\n"+
		"\t\tLinearFDBTop............................0x%X\n"+
		"\t\tDefaultPort.............................%d\n"+
		"\t\tDefaultMulticastPrimaryPort.............%d\n"+
		"\t\tDefaultMulticastNotPrimaryPort..........%d\n"+
		"\t\tLifeTimeValue/PortStateChange/OpSL2VL...0x%X\n"+
		"\t\tLIDsPerPort.............................0x%X\n"+
		"\t\tPartitionEnforcementCap.................0x%X\n"+
		"\t\tflags...................................0x%X\n",
		r.LID, r.LinearFDBCap, r.RandomFDBCap, r.MulticastFDBCap, r.LinearFDBTop, r.DefaultPort,
		r.DefaultMcastPrimary, r.DefaultMcastNotPrim, r.LifeStateOptSL2VL, r.LIDsPerPort,
		r.PartitionEnforcingCap, r.Flags)
	if t.cpi != nil && t.cpi.CapMask2&saCapMask2McastTop != 0 {
		fmt.Fprintf(w, "\t\tMulticastFDBTop.........................0x%X\n", r.MulticastFDBTop)
	}
}

// informInfoRecord is an InformInfoRecord (IBA 15.2.5.12).
type informInfoRecord struct {
	SubscriberGID  rdma.GID `json:"subscriberGID"`
	SubscriberEnum uint16   `json:"subscriberEnum"`
	GID            rdma.GID `json:"gid"`
	LIDRangeBegin  uint16   `json:"lidRangeBegin"`
	LIDRangeEnd    uint16   `json:"lidRangeEnd"`
	IsGeneric      uint8    `json:"isGeneric"`
	Subscribe      uint8    `json:"subscribe"`
	Type           uint16   `json:"type"`
	TrapOrDeviceID uint16   `json:"trapNumberOrDeviceID"`
	QPN            uint32   `json:"qpn"`
	RespTimeValue  uint8    `json:"respTimeValue"`
	ProducerType   uint32   `json:"producerTypeOrVendorID"`
}

func newInformInfoRecord(b []byte) *informInfoRecord {
	r := decodeSARecord[mad.InformInfoRecord](b)
	i := &r.InformInfo
	return &informInfoRecord{SubscriberGID: r.SubscriberGID, SubscriberEnum: r.Enumeration, GID: i.GID,
		LIDRangeBegin: i.LIDRangeBegin, LIDRangeEnd: i.LIDRangeEnd, IsGeneric: i.IsGeneric, Subscribe: i.Subscribe,
		Type: i.Type, TrapOrDeviceID: i.TrapNumber, QPN: i.QPN, RespTimeValue: i.RespTimeValue, ProducerType: i.ProducerType}
}

func (r *informInfoRecord) writeText(w io.Writer, t *saText) {
	numLabel, prodLabel := "trap_num................%d\n", "node_type"
	if r.IsGeneric == 0 {
		numLabel, prodLabel = "dev_id..................0x%X\n", "vendor_id"
	}
	fmt.Fprintf(w, "InformInfoRecord dump:\n"+
		"\t\tRID\n"+
		"\t\tSubscriberGID...........%s\n"+
		"\t\tSubscriberEnum..........0x%X\n"+
		"\t\tInformInfo dump:\n"+
		"\t\tgid.....................%s\n"+
		"\t\tlid_range_begin.........%d\n"+
		"\t\tlid_range_end...........%d\n"+
		"\t\tis_generic..............0x%X\n"+
		"\t\tsubscribe...............0x%X\n"+
		"\t\ttrap_type...............0x%X\n"+
		"\t\t"+numLabel,
		r.SubscriberGID, r.SubscriberEnum, r.GID, r.LIDRangeBegin, r.LIDRangeEnd, r.IsGeneric,
		r.Subscribe, r.Type, r.TrapOrDeviceID)
	fmt.Fprintf(w, "\t\tqpn.....................%s\n", t.keyText(fmt.Sprintf("0x%06X", r.QPN)))
	fmt.Fprintf(w, "\t\tresp_time_val...........0x%X\n"+
		"\t\t%s0x%06X\n", r.RespTimeValue, dotted(prodLabel, 24), r.ProducerType)
}

// linkRecord is a LinkRecord (IBA 15.2.5.15).
type linkRecord struct{ *mad.LinkRecord }

func newLinkRecord(b []byte) linkRecord { return linkRecord{decodeSARecord[mad.LinkRecord](b)} }

func (r linkRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "LinkRecord dump:\n"+
		"\t\tFromLID....................%d\n"+
		"\t\tFromPort...................%d\n"+
		"\t\tToPort.....................%d\n"+
		"\t\tToLID......................%d\n", r.FromLID, r.FromPort, r.ToPort, r.ToLID)
}

// sl2vlRecord is an SLtoVLMappingTableRecord (IBA 15.2.5.4).
type sl2vlRecord struct {
	LID     uint16    `json:"lid"`
	InPort  uint8     `json:"inPort"`
	OutPort uint8     `json:"outPort"`
	VL      [16]uint8 `json:"vlBySL"`
}

func newSL2VLRecord(b []byte) *sl2vlRecord {
	r := decodeSARecord[mad.SLtoVLMappingTableRecord](b)
	return &sl2vlRecord{LID: r.LID, InPort: r.InputPortNum, OutPort: r.OutputPortNum, VL: r.VLs()}
}

func (r *sl2vlRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "SL2VLTableRecord dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tInPort.....................%d\n"+
		"\t\tOutPort....................%d\n"+
		"\t\tSL: 0| 1| 2| 3| 4| 5| 6| 7| 8| 9|10|11|12|13|14|15|\n"+
		"\t\tVL:", r.LID, r.InPort, r.OutPort)
	for _, v := range r.VL {
		fmt.Fprintf(w, "%2d|", v)
	}
	fmt.Fprintln(w)
}

// vlArbRecord is a VLArbitrationTableRecord (IBA 15.2.5.9).
type vlArbRecord struct {
	LID     uint16    `json:"lid"`
	Port    uint8     `json:"port"`
	Block   uint8     `json:"block"`
	VL      [32]uint8 `json:"vl"`
	Weights [32]uint8 `json:"weight"`
}

func newVLArbRecord(b []byte) *vlArbRecord {
	r := decodeSARecord[mad.VLArbitrationTableRecord](b)
	v := &vlArbRecord{LID: r.LID, Port: r.OutputPortNum, Block: r.BlockNum}
	v.VL, v.Weights = r.Entries()
	return v
}

func (r *vlArbRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "VLArbTableRecord dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPort.......................%d\n"+
		"\t\tBlock......................%d\n", r.LID, r.Port, r.Block)
	for i := 0; i < 32; i += 16 {
		fmt.Fprint(w, "\t\tVL    :")
		for _, v := range r.VL[i : i+16] {
			fmt.Fprintf(w, "%2d|", v)
		}
		fmt.Fprint(w, "\n\t\tWeight:")
		for _, v := range r.Weights[i : i+16] {
			fmt.Fprintf(w, "%2d|", v)
		}
		fmt.Fprintln(w)
	}
}

// pkeyTableRecord is a P_KeyTableRecord (IBA 15.2.5.11).
type pkeyTableRecord struct {
	LID   uint16     `json:"lid"`
	Block uint16     `json:"block"`
	Port  uint8      `json:"port"`
	PKeys [32]uint16 `json:"pKeys"`
	// blockText is the block as saquery prints it: the field's two bytes
	// in the host's (little-endian) order, without be16toh, which gives
	// the right number for opensm, which sends it little-endian.
	blockText uint16
}

func newPKeyTableRecord(b []byte) *pkeyTableRecord {
	r := decodeSARecord[mad.PKeyTableRecord](b)
	return &pkeyTableRecord{LID: r.LID, Block: r.BlockNum, Port: r.PortNum, PKeys: r.PKeys(), blockText: r.SwappedBlockNum()}
}

func (r *pkeyTableRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "PKeyTableRecord dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPort.......................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tPKey Table:\n", r.LID, r.Port, r.blockText)
	for i := 0; i < 32; i += 8 {
		p := r.PKeys[i:]
		fmt.Fprintf(w, "\t\t0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x 0x%04x\n",
			p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
	}
	fmt.Fprintln(w)
}

// lftRecord is a LinearForwardingTableRecord (IBA 15.2.5.6).
type lftRecord struct {
	LID   uint16    `json:"lid"`
	Block uint16    `json:"block"`
	Ports [64]uint8 `json:"ports"`
}

func newLFTRecord(b []byte) *lftRecord {
	r := decodeSARecord[mad.LinearForwardingTableRecord](b)
	return &lftRecord{LID: r.LID, Block: r.BlockNum, Ports: r.LinearForwardingTable.LinearForwTbl}
}

func (r *lftRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "LFT Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tLFT:\n\t\tLID\tPort Number\n", r.LID, r.Block)
	for i, p := range r.Ports {
		fmt.Fprintf(w, "\t\t%d\t%d\n", int(r.Block)*64+i, p)
	}
	fmt.Fprintln(w)
}

// guidInfoRecord is a GUIDInfoRecord (IBA 15.2.5.18).
type guidInfoRecord struct {
	LID   uint16    `json:"lid"`
	Block uint8     `json:"block"`
	GUIDs [8]uint64 `json:"guids"`
}

func newGUIDInfoRecord(b []byte) *guidInfoRecord {
	r := decodeSARecord[mad.GUIDInfoRecord](b)
	g := &guidInfoRecord{LID: r.LID, Block: r.BlockNum}
	for i, guid := range r.GUIDs() {
		g.GUIDs[i] = uint64(guid)
	}
	return g
}

func (r *guidInfoRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "GUIDInfo Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tBlock......................%d\n", r.LID, r.Block)
	for i, g := range r.GUIDs {
		fmt.Fprintf(w, "\t\tGUID %d.....................0x%016x\n", i, g)
	}
}

// mftRecord is a MulticastForwardingTableRecord (IBA 15.2.5.8).
type mftRecord struct {
	LID      uint16     `json:"lid"`
	Position uint8      `json:"position"`
	Block    uint16     `json:"block"`
	PortMask [32]uint16 `json:"portMasks"`
}

func newMFTRecord(b []byte) *mftRecord {
	r := decodeSARecord[mad.MulticastForwardingTableRecord](b)
	return &mftRecord{LID: r.LID, Position: r.Position, Block: r.BlockNum, PortMask: r.PortMasks()}
}

func (r *mftRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "MFT Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPosition...................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tMFT:\n\t\tMLID\tPort Mask\n", r.LID, r.Position, r.Block)
	for i, m := range r.PortMask {
		fmt.Fprintf(w, "\t\t0x%04x\t0x%04x\n", mad.MinMulticastLID+int(r.Block)*mad.MFTBlockSize+i, m)
	}
	fmt.Fprintln(w)
}
