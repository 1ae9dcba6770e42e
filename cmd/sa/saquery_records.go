package sa

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// The SA records saquery prints, decoded into their generated structs
// (pkg/mad, from attributes.tbl) and printed as infiniband-diags' saquery
// prints them. Each record type has a view: the --json form (its keys are
// docs/saquery.md's, older than the generated names) with a text writer.
// A record type with no view prints as a generic dump of its layout.

// saText is what the text of some records depends on.
type saText struct {
	names    interface{ Name(uint64, string) string }
	showKeys bool
	// cpi is the SA's ClassPortInfo when it was asked (SwitchInfoRecords
	// print MulticastFDBTop when its CapabilityMask2 says it is filled).
	cpi *classPortInfo
}

// name maps a node GUID and description to the name printed.
func (t *saText) name(guid rdma.GUID, desc string) string {
	if t.names == nil {
		return desc
	}
	return t.names.Name(uint64(guid), desc)
}

// keyText is a key as printed: hidden unless -K.
func (t *saText) keyText(s string) string {
	if !t.showKeys {
		return madtext.NotDisplayed
	}
	return s
}

// saRecord is the generated struct of an SA record type.
type saRecord[T any] interface {
	*T
	mad.Attribute
}

// decodeSARecord decodes a record the SA sent, at least its layout's size
// long (getTable checks), into its generated struct.
func decodeSARecord[T any, P saRecord[T]](b []byte) *T {
	r := new(T)
	P(r).UnmarshalBinary(b)
	return r
}

// genericRecord is a record of a type saquery has no view of: its text is
// its layout's dump, its JSON its generated struct.
type genericRecord struct {
	attr mad.Attribute
	raw  []byte
}

func (r genericRecord) MarshalJSON() ([]byte, error) { return json.Marshal(r.attr) }

func (r genericRecord) writeText(w io.Writer, _ *saText) {
	l := r.attr.Layout()
	fmt.Fprintf(w, "%s dump:\n", l.Name)
	for _, line := range strings.SplitAfter(string(madtext.AppendDump(nil, l, r.raw)), "\n") {
		if line != "" {
			fmt.Fprintf(w, "\t\t%s", line)
		}
	}
}

// nodeRecord is a NodeRecord (IBA 15.2.5.2).
type nodeRecord struct {
	LID             uint16       `json:"lid"`
	Reserved        uint16       `json:"reserved"`
	NodeInfo        mad.NodeInfo `json:"nodeInfo"`
	NodeDescription string       `json:"nodeDescription"`
	desc            mad.NodeDescString
}

func newNodeRecord(b []byte) *nodeRecord {
	r := decodeSARecord[mad.NodeRecord](b)
	d := r.NodeDescription.NodeDescription
	return &nodeRecord{LID: r.LID, NodeInfo: r.NodeInfo, NodeDescription: d.String(), desc: d}
}

// descMatches is saquery's comparison of a name with the description:
// strncmp over the 64 bytes.
func (r *nodeRecord) descMatches(name string) bool { return strncmp64(name, r.desc[:]) }

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

// nodeTypeText is the node type as saquery's NodeRecord dump names it: the
// dumper's names, and UNKNOWN for any other value.
func nodeTypeText(t mad.NodeType) string {
	if t < mad.NodeTypeCA || t > mad.NodeTypeRouter {
		return "UNKNOWN"
	}
	return t.String()
}

func (r *nodeRecord) writeText(w io.Writer, t *saText) {
	ni := &r.NodeInfo
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
		r.LID, r.Reserved, ni.BaseVersion, ni.ClassVersion, nodeTypeText(ni.NodeType), ni.NumPorts,
		uint64(ni.SystemImageGUID), uint64(ni.NodeGUID), uint64(ni.PortGUID), ni.PartitionCap,
		ni.DeviceID, ni.Revision, ni.LocalPortNum, ni.VendorID,
		t.name(ni.NodeGUID, r.NodeDescription))
}

// pathRecord is a PathRecord (IBA 15.2.5.16) as saquery's C struct
// holds it: the bytes that pack several fields as one number.
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
	// reservedHigh is resv2's first byte: ReversePathPKeyMemberBit on
	// top, the rest reserved.
	reservedHigh uint8
}

// selected packs a 2-bit selector and a 6-bit value as their byte.
func selected(sel, v uint8) uint8 { return sel<<6 | v&0x3f }

func newPathRecord(b []byte) *pathRecord {
	r := decodeSARecord[mad.PathRecord](b)
	return &pathRecord{ServiceID: r.ServiceID, DGID: r.DGID, SGID: r.SGID, DLID: r.DLID, SLID: r.SLID,
		HopFlowRaw: uint32(r.RawTraffic)<<31 | r.FlowLabel<<8 | uint32(r.HopLimit), TClass: r.TClass,
		NumPath: r.Reversible<<7 | r.NumbPath, PKey: r.PKey, QoSClass: r.QOSClass, SL: r.SL,
		MTU: selected(r.MTUSelector, r.MTU), Rate: selected(r.RateSelector, r.Rate),
		PktLife: selected(r.PacketLifeTimeSelector, r.PacketLifeTime), Preference: r.Preference,
		reservedHigh: r.ReversePathPKeyMemberBit << 6}
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
		"\t\tresv2...................0x%02X0000000000\n",
		r.ServiceID, r.DGID, r.SGID, r.DLID, r.SLID, r.HopFlowRaw, r.TClass, r.NumPath, r.PKey,
		r.QoSClass, r.SL, r.MTU, r.Rate, r.PktLife, r.Preference, r.reservedHigh)
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

// tcSLFL packs a traffic class, SL and flow label as their 32 bits.
func tcSLFL(tc, sl uint8, fl uint32) uint32 { return uint32(tc)<<24 | uint32(sl)<<20 | fl }

func newClassPortInfo(b []byte) *classPortInfo {
	c := decodeSARecord[mad.ClassPortInfo](b)
	return &classPortInfo{BaseVersion: c.BaseVersion, ClassVersion: c.ClassVersion, CapMask: c.CapabilityMask,
		CapMask2: c.CapabilityMask2, RespTimeValue: c.RespTimeValue, RedirectGID: c.RedirectGID,
		RedirectTCSLFL: tcSLFL(c.RedirectTC, c.RedirectSL, c.RedirectFL), RedirectLID: c.RedirectLID,
		RedirectPKey: c.RedirectPKey, RedirectQP: c.RedirectQP, RedirectQKey: c.RedirectQKey, TrapGID: c.TrapGID,
		TrapTCSLFL: tcSLFL(c.TrapTC, c.TrapSL, c.TrapFL), TrapLID: c.TrapLID, TrapPKey: c.TrapPKey,
		TrapHLQP: uint32(c.TrapHL)<<24 | c.TrapQP, TrapQKey: c.TrapQKey}
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
	// brief selects saquery -s's short form.
	brief bool
}

func newPortInfoRecord(b []byte) *portInfoRecord {
	r := decodeSARecord[mad.PortInfoRecord](b)
	return &portInfoRecord{EndPortLID: r.EndportLID, PortNum: r.PortNum, Options: r.Options, PortInfo: r.PortInfo}
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
	w.Write(madtext.AppendPortInfo(nil, &r.PortInfo, "\t\t", t.showKeys))
}
