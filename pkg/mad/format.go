package mad

import (
	"strconv"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// appendNamed appends v in one of libibmad's named formats: link widths and
// speeds, port states, MTUs, VLs and capability masks, with its text for
// values outside the spec ("?(9)", "undefined (9)").
func appendNamed(b []byte, f Format, v uint32) []byte {
	switch f {
	case FormatNodeType:
		if s := pick(v, "", "Channel Adapter", "Switch", "Router"); s != "" {
			return append(b, s...)
		}
		return append(strconv.AppendUint(append(b, "?("...), uint64(v), 10), ")?"...)
	case FormatLinkWidth:
		switch v {
		case 1, 2, 4, 8, 16:
			return append(b, linkWidths[bitIndex(v)]...)
		}
		return appendUndefined(b, v)
	case FormatLinkWidthEnabled:
		return appendLinkWidths(b, v)
	case FormatLinkWidthSupported:
		b = appendLinkWidths(b, v)
		switch v {
		case 1, 3, 7, 11, 15, 17, 19, 23, 27, 31:
		default:
			if v>>5 == 0 {
				b = append(b, " (IBA extension)"...)
			}
		}
		return b
	case FormatLinkSpeed:
		switch v {
		case 0:
			return append(b, "Extended speed"...)
		case 1, 2, 4:
			return append(b, linkSpeeds[bitIndex(v)]...)
		}
		return appendUndefined(b, v)
	case FormatLinkSpeedEnabled, FormatLinkSpeedSupported:
		return appendLinkSpeeds(b, v)
	case FormatLinkSpeedExt:
		switch v {
		case 0:
			return append(b, "No Extended Speed"...)
		case 1, 2, 4, 8:
			return append(b, extSpeeds[bitIndex(v)]...)
		}
		return appendUndefined(b, v)
	case FormatLinkSpeedExtSupported:
		return appendExtSpeeds(b, v)
	case FormatLinkSpeedExtEnabled:
		if v == 30 {
			return append(b, "Extended link speeds disabled"...)
		}
		return appendExtSpeeds(b, v)
	case FormatPortState:
		return appendState(b, v, "NoChange", "Down", "Initialize", "Armed", "Active")
	case FormatLinkDownDefState:
		return appendState(b, v, "NoChange", "Sleep", "Polling")
	case FormatPhysPortState:
		return appendState(b, v, "NoChange", "Sleep", "Polling", "Disabled",
			"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest")
	case FormatMTU:
		return appendState(b, v, "", "256", "512", "1024", "2048", "4096")
	case FormatVLCap:
		return appendState(b, v, "", "VL0", "VL0-1", "VL0-3", "VL0-7", "VL0-14")
	case FormatOperVLs:
		return appendState(b, v, "No change", "VL0", "VL0-1", "VL0-3", "VL0-7", "VL0-14")
	case FormatPortCapMask:
		return appendCapMask(b, v, portCapNames[:])
	case FormatPortCapMask2:
		return appendCapMask(b, v, portCap2Names[:])
	}
	return strconv.AppendUint(b, uint64(v), 10)
}

var (
	linkWidths = [...]string{"1X", "4X", "8X", "12X", "2X"}
	linkSpeeds = [...]string{"2.5 Gbps", "5.0 Gbps", "10.0 Gbps"}
	extSpeeds  = [...]string{"14.0625 Gbps", "25.78125 Gbps", "53.125 Gbps", "106.25 Gbps"}
)

// pick returns names[v], or "" past the end.
func pick(v uint32, names ...string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return ""
}

// bitIndex returns the index of the only bit set in v.
func bitIndex(v uint32) int {
	i := 0
	for v > 1 {
		v >>= 1
		i++
	}
	return i
}

func appendUndefined(b []byte, v uint32) []byte {
	b = append(b, "undefined ("...)
	b = strconv.AppendUint(b, uint64(v), 10)
	return append(b, ')')
}

// appendState appends names[v], or "?(v)" for a value without a name.
func appendState(b []byte, v uint32, names ...string) []byte {
	if s := pick(v, names...); s != "" {
		return append(b, s...)
	}
	b = append(b, "?("...)
	b = strconv.AppendUint(b, uint64(v), 10)
	return append(b, ')')
}

// appendSet appends the names of v's bits joined by " or ".
func appendSet(b []byte, v uint32, names []string) []byte {
	first := true
	for i, s := range names {
		if v&(1<<i) == 0 {
			continue
		}
		if !first {
			b = append(b, " or "...)
		}
		b = append(b, s...)
		first = false
	}
	return b
}

// appendLinkWidths is libibmad's dump_linkwidth.
func appendLinkWidths(b []byte, v uint32) []byte {
	if v == 0 || v>>5 != 0 {
		b = appendSet(b, v, linkWidths[:])
		if v&0x1f != 0 {
			b = append(b, " or "...)
		}
		return appendUndefined(b, v)
	}
	return appendSet(b, v, linkWidths[:])
}

// appendLinkSpeeds is libibmad's dump_linkspeed.
func appendLinkSpeeds(b []byte, v uint32) []byte {
	if v == 0 || v>>3 != 0 {
		b = appendSet(b, v, linkSpeeds[:])
		if v&0x7 != 0 {
			b = append(b, " or "...)
		}
		b = appendUndefined(b, v)
		if v == 0 {
			b = append(b, " (IBA extension)"...) // as libibmad does
		}
		return b
	}
	b = appendSet(b, v, linkSpeeds[:])
	switch v {
	case 1, 3, 5, 7:
		return b
	}
	return append(b, " (IBA extension)"...)
}

// appendExtSpeeds is libibmad's dump_linkspeedext.
func appendExtSpeeds(b []byte, v uint32) []byte {
	if v == 0 {
		return append(b, '0')
	}
	b = appendSet(b, v, extSpeeds[:])
	if v>>4 != 0 {
		if v&0xf != 0 {
			b = append(b, " or "...)
		}
		return appendUndefined(b, v)
	}
	return b
}

// appendCapMask is mad_dump_portcapmask: the mask in hex, then each set
// bit's name on its own line after four tabs.
func appendCapMask(b []byte, v uint32, names []string) []byte {
	b = append(b, "0x"...)
	b = strconv.AppendUint(b, uint64(v), 16)
	for i, s := range names {
		if s != "" && v&(1<<i) != 0 {
			b = append(b, "\n\t\t\t\t"...)
			b = append(b, s...)
		}
	}
	return b
}

// PortInfo:CapabilityMask and CapabilityMask2 bits that tools test; the
// names are those libibmad dumps (portCapNames, portCap2Names).
const (
	PortCapIsSM                         = 1 << 1
	PortCapIsSMDisabled                 = 1 << 10
	PortCapIsExtendedSpeedsSupported    = 1 << 14
	PortCapIsCapabilityMask2Supported   = 1 << 15
	PortCap2IsPortInfoExtendedSupported = 1 << 1
)

// portCapNames names PortInfo:CapabilityMask's bits as libibmad does.
var portCapNames = [32]string{
	1:  "IsSM",
	2:  "IsNoticeSupported",
	3:  "IsTrapSupported",
	4:  "IsOptionalIPDSupported",
	5:  "IsAutomaticMigrationSupported",
	6:  "IsSLMappingSupported",
	7:  "IsMKeyNVRAM",
	8:  "IsPKeyNVRAM",
	9:  "IsLedInfoSupported",
	10: "IsSMdisabled",
	11: "IsSystemImageGUIDsupported",
	12: "IsPkeySwitchExternalPortTrapSupported",
	14: "IsExtendedSpeedsSupported",
	15: "IsCapabilityMask2Supported",
	16: "IsCommunicatonManagementSupported",
	17: "IsSNMPTunnelingSupported",
	18: "IsReinitSupported",
	19: "IsDeviceManagementSupported",
	20: "IsVendorClassSupported",
	21: "IsDRNoticeSupported",
	22: "IsCapabilityMaskNoticeSupported",
	23: "IsBootManagementSupported",
	24: "IsLinkRoundTripLatencySupported",
	25: "IsClientRegistrationSupported",
	26: "IsOtherLocalChangesNoticeSupported",
	27: "IsLinkSpeedWidthPairsTableSupported",
	28: "IsVendorSpecificMadsTableSupported",
	29: "IsMcastPkeyTrapSuppressionSupported",
	30: "IsMulticastFDBTopSupported",
	31: "IsHierarchyInfoSupported",
}

// portCap2Names names PortInfo:CapabilityMask2's bits as libibmad does.
var portCap2Names = [16]string{
	0:  "IsSetNodeDescriptionSupported",
	1:  "IsPortInfoExtendedSupported",
	2:  "IsVirtualizationSupported",
	3:  "IsSwitchPortStateTableSupported",
	4:  "IsLinkWidth2xSupported",
	5:  "IsLinkSpeedHDRSupported",
	6:  "IsMKeyProtectBitsExtSupported",
	7:  "IsEnhancedTrap128Supported",
	8:  "IsPartitionTopSupported",
	9:  "IsEnhancedQoSArbiterSupported",
	10: "IsLinkSpeedNDRSupported",
}

// Text returns v as libibmad's dump function for the format prints it:
// FormatLinkWidth.Text(2) is "4X", FormatPortState.Text(4) is "Active".
// Formats without names give the decimal value.
func (f Format) Text(v uint32) string { return string(appendNamed(nil, f, v)) }

// AppendText appends what Text returns to b.
func (f Format) AppendText(b []byte, v uint32) []byte { return appendNamed(b, f, v) }

// Abbrev returns the short name infiniband-diags' fabric tools give a node
// type (iblinkinfo's nodetype_str, libibnetdisc's cache): "CA", "Switch" or
// "Router", the names the kernel's node_type numbering (the same for these
// three) has in rdma.NodeType; "" for other values.
func (t NodeType) Abbrev() string {
	if r := rdma.NodeType(t); r.IsIB() {
		return r.String()
	}
	return ""
}
