package cmd

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The SA records saquery prints, decoded from their IBA layouts (IBA
// 15.2.5; the byte offsets are those of libibmad's iba_types.h) and printed
// as infiniband-diags' saquery prints them. Each record type decodes into
// a struct, which is also its --json form, with a text writer.

// SA attribute IDs (IBA 15.2.5, table 204).
const (
	saAttrClassPortInfo   mad.AttrID = 0x0001
	saAttrNodeRecord      mad.AttrID = 0x0011
	saAttrPortInfoRecord  mad.AttrID = 0x0012
	saAttrSL2VLRecord     mad.AttrID = 0x0013
	saAttrSwitchInfoRec   mad.AttrID = 0x0014
	saAttrLFTRecord       mad.AttrID = 0x0015
	saAttrMFTRecord       mad.AttrID = 0x0017
	saAttrSMInfoRecord    mad.AttrID = 0x0018
	saAttrLinkRecord      mad.AttrID = 0x0020
	saAttrGUIDInfoRecord  mad.AttrID = 0x0030
	saAttrServiceRecord   mad.AttrID = 0x0031
	saAttrPKeyTableRecord mad.AttrID = 0x0033
	saAttrPathRecord      mad.AttrID = 0x0035
	saAttrMultiPathRecord mad.AttrID = 0x003a
	saAttrVLArbRecord     mad.AttrID = 0x0036
	saAttrMCMemberRecord  mad.AttrID = 0x0038
	saAttrInformInfoRec   mad.AttrID = 0x00f3
)

// be16, be32 and be64 read big-endian fields of a record.
func be16(b []byte, off int) uint16 { return binary.BigEndian.Uint16(b[off:]) }
func be32(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }
func be64(b []byte, off int) uint64 { return binary.BigEndian.Uint64(b[off:]) }

// gidAt reads the GID at off.
func gidAt(b []byte, off int) rdma.GID {
	var g rdma.GID
	copy(g[:], b[off:off+16])
	return g
}

// cString returns the bytes up to the first NUL.
func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// saRecordLen is the shortest record each record type decodes from: the
// record without its trailing pad.
var saRecordLen = map[mad.AttrID]int{
	saAttrClassPortInfo: 72, saAttrNodeRecord: 108, saAttrPortInfoRecord: 68,
	saAttrSL2VLRecord: 16, saAttrSwitchInfoRec: 24, saAttrLFTRecord: 72,
	saAttrMFTRecord: 72, saAttrSMInfoRecord: 25, saAttrLinkRecord: 6,
	saAttrGUIDInfoRecord: 72, saAttrServiceRecord: 176, saAttrPKeyTableRecord: 72,
	saAttrPathRecord: 64, saAttrVLArbRecord: 72, saAttrMCMemberRecord: 50,
	saAttrInformInfoRec: 60,
}

// saText is what the text of some records depends on.
type saText struct {
	names    interface{ Name(uint64, string) string }
	showKeys bool
	// cpi is the SA's ClassPortInfo when it was asked (SwitchInfoRecords
	// print MulticastFDBTop when its CapabilityMask2 says it is filled).
	cpi *classPortInfo
}

// name maps a node GUID and description to the name printed.
func (t *saText) name(guid uint64, desc string) string {
	if t.names == nil {
		return desc
	}
	return t.names.Name(guid, desc)
}

// keyText is a key as printed: hidden unless -K.
func (t *saText) keyText(s string) string {
	if !t.showKeys {
		return notDisplayed
	}
	return s
}

// nodeRecord is a NodeRecord (IBA 15.2.5.2).
type nodeRecord struct {
	LID             uint16       `json:"lid"`
	Reserved        uint16       `json:"reserved"`
	NodeInfo        mad.NodeInfo `json:"nodeInfo"`
	NodeDescription string       `json:"nodeDescription"`
	raw             []byte
}

func decodeNodeRecord(b []byte) *nodeRecord {
	r := &nodeRecord{LID: be16(b, 0), Reserved: be16(b, 2), raw: b}
	r.NodeInfo.UnmarshalBinary(b[4:44])
	r.NodeDescription = cString(b[44:108])
	return r
}

// descMatches is saquery's comparison of a name with the description:
// strncmp over the 64 bytes.
func (r *nodeRecord) descMatches(name string) bool {
	return strncmp64(name, r.raw[44:108])
}

// strncmp64 reports whether C's strncmp(s, field, 64) is 0 for the field's
// bytes (which need no NUL).
func strncmp64(s string, field []byte) bool {
	for i := 0; i < 64; i++ {
		var a, b byte
		if i < len(s) {
			a = s[i]
		}
		if i < len(field) {
			b = field[i]
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

var nodeTypeNames = []string{"UNKNOWN", "Channel Adapter", "Switch", "Router"}

func (r *nodeRecord) writeText(w io.Writer, t *saText) {
	ni := &r.NodeInfo
	nt := int(ni.NodeType)
	if nt >= len(nodeTypeNames) {
		nt = 0
	}
	fmt.Fprintf(w, "NodeRecord dump:\n"+
		"\t\tlid.....................%d\n"+
		"\t\treserved................0x%X\n"+
		"\t\tbase_version............0x%X\n"+
		"\t\tclass_version...........0x%X\n"+
		"\t\tnode_type...............%s\n"+
		"\t\tnum_ports...............%d\n"+
		"\t\tsys_guid................0x%016x\n"+
		"\t\tnode_guid...............0x%016x\n"+
		"\t\tport_guid...............0x%016x\n"+
		"\t\tpartition_cap...........0x%X\n"+
		"\t\tdevice_id...............0x%X\n"+
		"\t\trevision................0x%X\n"+
		"\t\tport_num................%d\n"+
		"\t\tvendor_id...............0x%X\n"+
		"\t\tNodeDescription.........%s\n",
		r.LID, r.Reserved, ni.BaseVersion, ni.ClassVersion, nodeTypeNames[nt], ni.NumPorts,
		uint64(ni.SystemImageGUID), uint64(ni.NodeGUID), uint64(ni.PortGUID), ni.PartitionCap,
		ni.DeviceID, ni.Revision, ni.LocalPortNum, ni.VendorID,
		t.name(uint64(ni.NodeGUID), r.NodeDescription))
}

// pathRecord is a PathRecord (IBA 15.2.5.16).
type pathRecord struct {
	ServiceID  uint64   `json:"serviceID"`
	DGID       rdma.GID `json:"dgid"`
	SGID       rdma.GID `json:"sgid"`
	DLID       uint16   `json:"dlid"`
	SLID       uint16   `json:"slid"`
	HopFlowRaw uint32   `json:"hopFlowRaw"`
	TClass     uint8    `json:"tClass"`
	NumPath    uint8    `json:"numPathReversible"`
	PKey       uint16   `json:"pKey"`
	QoSClass   uint16   `json:"qosClass"`
	SL         uint8    `json:"sl"`
	MTU        uint8    `json:"mtu"`
	Rate       uint8    `json:"rate"`
	PktLife    uint8    `json:"packetLifeTime"`
	Preference uint8    `json:"preference"`
	Reserved   [6]byte  `json:"-"`
}

func decodePathRecord(b []byte) *pathRecord {
	r := &pathRecord{ServiceID: be64(b, 0), DGID: gidAt(b, 8), SGID: gidAt(b, 24), DLID: be16(b, 40),
		SLID: be16(b, 42), HopFlowRaw: be32(b, 44), TClass: b[48], NumPath: b[49], PKey: be16(b, 50),
		QoSClass: be16(b, 52) >> 4, SL: b[53] & 0xf, MTU: b[54], Rate: b[55], PktLife: b[56], Preference: b[57]}
	copy(r.Reserved[:], b[58:64])
	return r
}

func (r *pathRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "PathRecord dump:\n"+
		"\t\tservice_id..............0x%016x\n"+
		"\t\tdgid....................%s\n"+
		"\t\tsgid....................%s\n"+
		"\t\tdlid....................%d\n"+
		"\t\tslid....................%d\n"+
		"\t\thop_flow_raw............0x%X\n"+
		"\t\ttclass..................0x%X\n"+
		"\t\tnum_path_revers.........0x%X\n"+
		"\t\tpkey....................0x%X\n"+
		"\t\tqos_class...............0x%X\n"+
		"\t\tsl......................0x%X\n"+
		"\t\tmtu.....................0x%X\n"+
		"\t\trate....................0x%X\n"+
		"\t\tpkt_life................0x%X\n"+
		"\t\tpreference..............0x%X\n"+
		"\t\tresv2...................0x%02X%02X%02X%02X%02X%02X\n",
		r.ServiceID, r.DGID, r.SGID, r.DLID, r.SLID, r.HopFlowRaw, r.TClass, r.NumPath, r.PKey,
		r.QoSClass, r.SL, r.MTU, r.Rate, r.PktLife, r.Preference,
		r.Reserved[0], r.Reserved[1], r.Reserved[2], r.Reserved[3], r.Reserved[4], r.Reserved[5])
}

// classPortInfo is the SA's ClassPortInfo (IBA 13.4.8.1).
type classPortInfo struct {
	BaseVersion    uint8    `json:"baseVersion"`
	ClassVersion   uint8    `json:"classVersion"`
	CapMask        uint16   `json:"capabilityMask"`
	CapMask2       uint32   `json:"capabilityMask2"`
	RespTimeValue  uint8    `json:"respTimeValue"`
	RedirectGID    rdma.GID `json:"redirectGID"`
	RedirectTCSLFL uint32   `json:"redirectTCSLFL"`
	RedirectLID    uint16   `json:"redirectLID"`
	RedirectPKey   uint16   `json:"redirectPKey"`
	RedirectQP     uint32   `json:"redirectQP"`
	RedirectQKey   uint32   `json:"redirectQKey"`
	TrapGID        rdma.GID `json:"trapGID"`
	TrapTCSLFL     uint32   `json:"trapTCSLFL"`
	TrapLID        uint16   `json:"trapLID"`
	TrapPKey       uint16   `json:"trapPKey"`
	TrapHLQP       uint32   `json:"trapHLQP"`
	TrapQKey       uint32   `json:"trapQKey"`
}

func decodeClassPortInfo(b []byte) *classPortInfo {
	v := be32(b, 4)
	return &classPortInfo{BaseVersion: b[0], ClassVersion: b[1], CapMask: be16(b, 2), CapMask2: v >> 5,
		RespTimeValue: uint8(v & 0x1f), RedirectGID: gidAt(b, 8), RedirectTCSLFL: be32(b, 24),
		RedirectLID: be16(b, 28), RedirectPKey: be16(b, 30), RedirectQP: be32(b, 32), RedirectQKey: be32(b, 36),
		TrapGID: gidAt(b, 40), TrapTCSLFL: be32(b, 56), TrapLID: be16(b, 60), TrapPKey: be16(b, 62),
		TrapHLQP: be32(b, 64), TrapQKey: be32(b, 68)}
}

func (r *classPortInfo) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "SA ClassPortInfo:\n"+
		"\t\tBase version.............%d\n"+
		"\t\tClass version............%d\n"+
		"\t\tCapability mask..........0x%04X\n"+
		"\t\tCapability mask 2........0x%08X\n"+
		"\t\tResponse time value......0x%02X\n"+
		"\t\tRedirect GID.............%s\n"+
		"\t\tRedirect TC/SL/FL........0x%08X\n"+
		"\t\tRedirect LID.............%d\n"+
		"\t\tRedirect PKey............0x%04X\n"+
		"\t\tRedirect QP..............0x%08X\n"+
		"\t\tRedirect QKey............0x%08X\n"+
		"\t\tTrap GID.................%s\n"+
		"\t\tTrap TC/SL/FL............0x%08X\n"+
		"\t\tTrap LID.................%d\n"+
		"\t\tTrap PKey................0x%04X\n"+
		"\t\tTrap HL/QP...............0x%08X\n"+
		"\t\tTrap QKey................0x%08X\n",
		r.BaseVersion, r.ClassVersion, r.CapMask, r.CapMask2, r.RespTimeValue, r.RedirectGID,
		r.RedirectTCSLFL, r.RedirectLID, r.RedirectPKey, r.RedirectQP, r.RedirectQKey, r.TrapGID,
		r.TrapTCSLFL, r.TrapLID, r.TrapPKey, r.TrapHLQP, r.TrapQKey)
}

// portInfoRecord is a PortInfoRecord (IBA 15.2.5.3).
type portInfoRecord struct {
	EndPortLID uint16       `json:"endPortLID"`
	PortNum    uint8        `json:"portNum"`
	Options    uint8        `json:"options"`
	PortInfo   mad.PortInfo `json:"portInfo"`
	raw        []byte
	// brief selects saquery -s's short form.
	brief bool
}

func decodePortInfoRecord(b []byte) *portInfoRecord {
	r := &portInfoRecord{EndPortLID: be16(b, 0), PortNum: b[2], Options: b[3], raw: b}
	r.PortInfo.UnmarshalBinary(b[4:68])
	return r
}

func (r *portInfoRecord) writeText(w io.Writer, t *saText) {
	if r.brief {
		fmt.Fprintf(w, "PortInfoRecord dump:\n"+
			"\t\tEndPortLid..............%d\n"+
			"\t\tPortNum.................%d\n"+
			"\t\tbase_lid................%d\n"+
			"\t\tmaster_sm_base_lid......%d\n"+
			"\t\tcapability_mask.........0x%X\n",
			r.EndPortLID, r.PortNum, r.PortInfo.LID, r.PortInfo.SMLID, r.PortInfo.CapabilityMask)
		return
	}
	fmt.Fprintf(w, "PortInfoRecord dump:\n"+
		"\tRID\n"+
		"\t\tEndPortLid..............%d\n"+
		"\t\tPortNum.................%d\n"+
		"\t\tOptions.................0x%x\n"+
		"\tPortInfo dump:\n", r.EndPortLID, r.PortNum, r.Options)
	w.Write(r.PortInfo.AppendDump(nil, "\t\t", t.showKeys))
}

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
	// ScopeState is the byte Scope and JoinState share.
	ScopeState uint8 `json:"-"`
}

func decodeMCMemberRecord(b []byte) *mcMemberRecord {
	sfh := be32(b, 44)
	return &mcMemberRecord{MGID: gidAt(b, 0), PortGID: gidAt(b, 16), QKey: be32(b, 32), MLID: be16(b, 36),
		MTU: b[38], TClass: b[39], PKey: be16(b, 40), Rate: b[42], PktLife: b[43],
		SL: uint8(sfh >> 28 & 0xf), FlowLabel: sfh >> 8 & 0xfffff, HopLimit: uint8(sfh),
		Scope: b[48] >> 4, JoinState: b[48] & 0xf, ScopeState: b[48],
		// libibmad's proxy_join is a one-bit bit-field of byte 49: its
		// least significant bit with GCC on little-endian machines.
		ProxyJoin: b[49] & 1}
}

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

// mcGroupText is saquery -g's form of an MCMemberRecord.
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
	ServiceID    uint64    `json:"serviceID"`
	ServiceGID   rdma.GID  `json:"serviceGID"`
	ServicePKey  uint16    `json:"servicePKey"`
	ServiceLease uint32    `json:"serviceLease"`
	ServiceKey   [16]byte  `json:"-"`
	ServiceName  string    `json:"serviceName"`
	Data8        [16]uint8 `json:"serviceData8"`
	Data16       [8]uint16 `json:"serviceData16"`
	Data32       [4]uint32 `json:"serviceData32"`
	Data64       [2]uint64 `json:"serviceData64"`
}

func decodeServiceRecord(b []byte) *serviceRecord {
	r := &serviceRecord{ServiceID: be64(b, 0), ServiceGID: gidAt(b, 8), ServicePKey: be16(b, 24),
		ServiceLease: be32(b, 28), ServiceName: cString(b[48:112])}
	copy(r.ServiceKey[:], b[32:48])
	copy(r.Data8[:], b[112:128])
	for i := range r.Data16 {
		r.Data16[i] = be16(b, 128+2*i)
	}
	for i := range r.Data32 {
		r.Data32[i] = be32(b, 144+4*i)
	}
	for i := range r.Data64 {
		r.Data64[i] = be64(b, 160+8*i)
	}
	return r
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
	for i, v := range r.Data8 {
		fmt.Fprintf(w, "\t\t%s0x%X\n", dotted(fmt.Sprintf("ServiceData8.%d", i+1), 24), v)
	}
	for i, v := range r.Data16 {
		fmt.Fprintf(w, "\t\t%s0x%X\n", dotted(fmt.Sprintf("ServiceData16.%d", i+1), 24), v)
	}
	for i, v := range r.Data32 {
		fmt.Fprintf(w, "\t\t%s0x%X\n", dotted(fmt.Sprintf("ServiceData32.%d", i+1), 24), v)
	}
	for i, v := range r.Data64 {
		fmt.Fprintf(w, "\t\t%s0x%016x\n", dotted(fmt.Sprintf("ServiceData64.%d", i+1), 24), v)
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

func decodeSMInfoRecord(b []byte) *smInfoRecord {
	return &smInfoRecord{LID: be16(b, 0), GUID: be64(b, 4), SMKey: be64(b, 12), ActCount: be32(b, 20),
		Priority: b[24] >> 4, SMState: b[24] & 0xf}
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

// switchInfoRecord is a SwitchInfoRecord (IBA 15.2.5.4).
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

func decodeSwitchInfoRecord(b []byte) *switchInfoRecord {
	s := b[4:]
	return &switchInfoRecord{LID: be16(b, 0), LinearFDBCap: be16(s, 0), RandomFDBCap: be16(s, 2),
		MulticastFDBCap: be16(s, 4), LinearFDBTop: be16(s, 6), DefaultPort: s[8], DefaultMcastPrimary: s[9],
		DefaultMcastNotPrim: s[10], LifeStateOptSL2VL: s[11], LIDsPerPort: be16(s, 12),
		PartitionEnforcingCap: be16(s, 14), Flags: s[16], MulticastFDBTop: be16(s, 18)}
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

func decodeInformInfoRecord(b []byte) *informInfoRecord {
	q := be32(b, 52)
	return &informInfoRecord{SubscriberGID: gidAt(b, 0), SubscriberEnum: be16(b, 16), GID: gidAt(b, 24),
		LIDRangeBegin: be16(b, 40), LIDRangeEnd: be16(b, 42), IsGeneric: b[46], Subscribe: b[47],
		Type: be16(b, 48), TrapOrDeviceID: be16(b, 50), QPN: q >> 8, RespTimeValue: uint8(q & 0x1f),
		ProducerType: uint32(b[57])<<16 | uint32(be16(b, 58))}
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
type linkRecord struct {
	FromLID  uint16 `json:"fromLID"`
	FromPort uint8  `json:"fromPort"`
	ToPort   uint8  `json:"toPort"`
	ToLID    uint16 `json:"toLID"`
}

func decodeLinkRecord(b []byte) *linkRecord {
	return &linkRecord{FromLID: be16(b, 0), FromPort: b[2], ToPort: b[3], ToLID: be16(b, 4)}
}

func (r *linkRecord) writeText(w io.Writer, _ *saText) {
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

func decodeSL2VLRecord(b []byte) *sl2vlRecord {
	r := &sl2vlRecord{LID: be16(b, 0), InPort: b[2], OutPort: b[3]}
	for sl := range r.VL {
		v := b[8+sl/2]
		if sl%2 == 0 {
			v >>= 4
		}
		r.VL[sl] = v & 0xf
	}
	return r
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

func decodeVLArbRecord(b []byte) *vlArbRecord {
	r := &vlArbRecord{LID: be16(b, 0), Port: b[2], Block: b[3]}
	for i := range r.VL {
		r.VL[i], r.Weights[i] = b[8+2*i], b[9+2*i]
	}
	return r
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
	// read in the host's (little-endian) order, without be16toh, which
	// gives the right number for opensm, which sends it little-endian.
	blockText uint16
}

func decodePKeyTableRecord(b []byte) *pkeyTableRecord {
	r := &pkeyTableRecord{LID: be16(b, 0), Block: be16(b, 2), Port: b[4], blockText: binary.LittleEndian.Uint16(b[2:])}
	for i := range r.PKeys {
		r.PKeys[i] = be16(b, 8+2*i)
	}
	return r
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

func decodeLFTRecord(b []byte) *lftRecord {
	r := &lftRecord{LID: be16(b, 0), Block: be16(b, 2)}
	copy(r.Ports[:], b[8:72])
	return r
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

func decodeGUIDInfoRecord(b []byte) *guidInfoRecord {
	r := &guidInfoRecord{LID: be16(b, 0), Block: b[2]}
	for i := range r.GUIDs {
		r.GUIDs[i] = be64(b, 8+8*i)
	}
	return r
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

func decodeMFTRecord(b []byte) *mftRecord {
	pb := be16(b, 2)
	r := &mftRecord{LID: be16(b, 0), Position: uint8(pb >> 12), Block: pb & 0x1ff}
	for i := range r.PortMask {
		r.PortMask[i] = be16(b, 8+2*i)
	}
	return r
}

func (r *mftRecord) writeText(w io.Writer, _ *saText) {
	fmt.Fprintf(w, "MFT Record dump:\n"+
		"\t\tLID........................%d\n"+
		"\t\tPosition...................%d\n"+
		"\t\tBlock......................%d\n"+
		"\t\tMFT:\n\t\tMLID\tPort Mask\n", r.LID, r.Position, r.Block)
	for i, m := range r.PortMask {
		fmt.Fprintf(w, "\t\t0x%04x\t0x%04x\n", 0xc000+int(r.Block)*32+i, m)
	}
	fmt.Fprintln(w)
}
