package verbs

import "errors"

// ErrNoVerbs is returned by a build without libibverbs.
var ErrNoVerbs = errors.New("ibtool was built without verbs (CGO_ENABLED=0 or -tags noverbs)")

// ErrNoLibibverbs is wrapped by what is returned when libibverbs, which
// ibtool loads on first use, cannot be loaded.
var ErrNoLibibverbs = errors.New("libibverbs could not be loaded")

// Transport is a device's transport type (enum ibv_transport_type).
type Transport int

// Transport types.
const (
	TransportUnknown     Transport = -1
	TransportIB          Transport = 0
	TransportIWARP       Transport = 1
	TransportUSNIC       Transport = 2
	TransportUSNICUDP    Transport = 3
	TransportUnspecified Transport = 4
)

// String names the transport as ibv_devinfo prints it ("InfiniBand"), and
// "invalid transport" for a value it has no name for.
func (t Transport) String() string {
	switch t {
	case TransportIB:
		return "InfiniBand"
	case TransportIWARP:
		return "iWARP"
	case TransportUSNIC:
		return "usNIC"
	case TransportUSNICUDP:
		return "usNIC UDP"
	case TransportUnspecified:
		return "unspecified"
	}
	return "invalid transport"
}

// LinkLayer is a port's link layer (IBV_LINK_LAYER_*).
type LinkLayer int

// Link layers.
const (
	LinkLayerUnspecified LinkLayer = 0
	LinkLayerInfiniBand  LinkLayer = 1
	LinkLayerEthernet    LinkLayer = 2
)

// String names the link layer as ibv_devinfo prints it ("InfiniBand",
// "Ethernet"), and "Unknown" for a value it has no name for.
func (l LinkLayer) String() string {
	switch l {
	case LinkLayerUnspecified:
		return "Unspecified"
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

// Device is one RDMA device as libibverbs opens and queries it.
type Device struct {
	Name         string    `json:"name"`
	Transport    Transport `json:"transport"`
	IBDevPath    string    `json:"-"` // the sysfs directory libibverbs read it from
	FWVer        string    `json:"fwVer"`
	NodeGUID     uint64    `json:"nodeGUID"`
	SysImageGUID uint64    `json:"sysImageGUID"`
	VendorID     uint32    `json:"vendorId"`
	VendorPartID uint32    `json:"vendorPartId"`
	HWVer        uint32    `json:"hwVer"`
	PhysPortCnt  int       `json:"physPortCnt"`
	Ports        []Port    `json:"ports"`
	// Attr holds the rest of the device's attributes (ibv_devinfo -v).
	Attr Attr `json:"attr"`
}

// Attr is the part of struct ibv_device_attr_ex that ibv_devinfo -v
// prints, and the context's completion vectors.
type Attr struct {
	MaxMRSize                                                   uint64 `json:"maxMrSize"`
	PageSizeCap                                                 uint64 `json:"pageSizeCap"`
	MaxQP, MaxQPWR                                              int    `json:"-"`
	DeviceCapFlags                                              uint32 `json:"deviceCapFlags"`
	MaxSGE, MaxSGERd                                            int    `json:"-"`
	MaxCQ, MaxCQE                                               int    `json:"-"`
	MaxMR, MaxPD                                                int    `json:"-"`
	MaxQPRdAtom, MaxEERdAtom                                    int    `json:"-"`
	MaxResRdAtom                                                int    `json:"-"`
	MaxQPInitRdAtom                                             int    `json:"-"`
	MaxEEInitRdAtom                                             int    `json:"-"`
	AtomicCap                                                   int    `json:"atomicCap"`
	MaxEE, MaxRDD, MaxMW                                        int    `json:"-"`
	MaxRawIPv6QP, MaxRawEthQP                                   int    `json:"-"`
	MaxMcastGrp                                                 int    `json:"-"`
	MaxMcastQPAttach                                            int    `json:"-"`
	MaxTotalMcastQPAttach                                       int    `json:"-"`
	MaxAH, MaxFMR, MaxMapPerFMR                                 int    `json:"-"`
	MaxSRQ, MaxSRQWR, MaxSRQSGE                                 int    `json:"-"`
	MaxPKeys                                                    int    `json:"maxPkeys"`
	LocalCAAckDelay                                             int    `json:"localCaAckDelay"`
	ODPGeneralCaps                                              uint64 `json:"odpGeneralCaps"`
	ODPRC, ODPUC, ODPUD, ODPXRC                                 uint32 `json:"-"`
	CompletionTimestampMask                                     uint64 `json:"completionTimestampMask"`
	HCACoreClock                                                uint64 `json:"hcaCoreClock"`
	RawPacketCaps                                               uint32 `json:"rawPacketCaps"`
	DeviceCapFlagsEx                                            uint64 `json:"deviceCapFlagsEx"`
	MaxTSO, TSOQPTs                                             uint32 `json:"-"`
	RSSQPTs                                                     uint32 `json:"-"`
	MaxRWQIndirectionTables                                     uint32 `json:"-"`
	MaxRWQIndirectionTableSize                                  uint32 `json:"-"`
	RXHashFunction                                              uint32 `json:"-"`
	RXHashFieldsMask                                            uint64 `json:"-"`
	MaxWQTypeRQ                                                 uint32 `json:"maxWqTypeRq"`
	QPRateLimitMin, QPRateLimitMax, PacingQPTs                  uint32 `json:"-"`
	TMMaxRndvHdrSize, TMMaxNumTags, TMFlags, TMMaxOps, TMMaxSGE uint32 `json:"-"`
	MaxCQCount, MaxCQPeriod                                     uint16 `json:"-"`
	MaxDMSize                                                   uint64 `json:"maxDmSize"`
	NumCompVectors                                              int    `json:"numCompVectors"`
	// PhysPortCnt is the port count of struct ibv_device_attr (at most
	// 255); PhysPortCntEx the extended attributes' (phys_port_cnt_ex),
	// which can count more, or 0 from a provider that does not set it.
	PhysPortCnt   int    `json:"-"`
	PhysPortCntEx uint32 `json:"-"`
}

// DeviceAttr is struct ibv_device_attr, what the legacy ibv_query_device
// reads (Context.QueryDeviceLegacy): the device's identity, as Device has
// it, and its limits and capabilities.
type DeviceAttr struct {
	FWVer        string `json:"fwVer"`
	NodeGUID     uint64 `json:"nodeGUID"`
	SysImageGUID uint64 `json:"sysImageGUID"`
	VendorID     uint32 `json:"vendorId"`
	VendorPartID uint32 `json:"vendorPartId"`
	HWVer        uint32 `json:"hwVer"`
	// Attr holds the fields of struct ibv_device_attr (MaxQP, MaxSGE,
	// AtomicCap, PhysPortCnt, ...); those only the extended query reads
	// (ODP and timestamp capabilities, DeviceCapFlagsEx, PhysPortCntEx,
	// ...) and NumCompVectors are zero.
	Attr Attr `json:"attr"`
}

// Atomic capabilities (enum ibv_atomic_cap), Attr.AtomicCap: none, atomic
// within the HCA's own accesses, and atomic against the CPU and other
// devices too.
const (
	AtomicNone = 0
	AtomicHCA  = 1
	AtomicGlob = 2
)

// PortState is a port's logical state (enum ibv_port_state).
type PortState int

// Port states.
const (
	PortStateNop         PortState = 0
	PortStateDown        PortState = 1
	PortStateInit        PortState = 2
	PortStateArmed       PortState = 3
	PortStateActive      PortState = 4
	PortStateActiveDefer PortState = 5
)

// String names the state as ibv_devinfo prints it ("PORT_ACTIVE"), and
// "invalid state" for the states it has no name for (NOP, ACTIVE_DEFER
// and others).
func (s PortState) String() string {
	switch s {
	case PortStateDown:
		return "PORT_DOWN"
	case PortStateInit:
		return "PORT_INIT"
	case PortStateArmed:
		return "PORT_ARMED"
	case PortStateActive:
		return "PORT_ACTIVE"
	}
	return "invalid state"
}

// Port is one port's attributes (struct ibv_port_attr).
type Port struct {
	Num       int       `json:"port"`
	State     PortState `json:"state"`
	MaxMTU    MTU       `json:"maxMtu"`
	ActiveMTU MTU       `json:"activeMtu"`
	SMLID     uint16    `json:"smLid"`
	LID       uint16    `json:"lid"`
	LMC       uint8     `json:"lmc"`
	LinkLayer LinkLayer `json:"linkLayer"`

	MaxMsgSz      uint32 `json:"maxMsgSz"`
	PortCapFlags  uint32 `json:"portCapFlags"`
	PortCapFlags2 uint16 `json:"portCapFlags2"`
	MaxVLNum      uint8  `json:"maxVlNum"`
	BadPKeyCntr   uint32 `json:"badPkeyCntr"`
	QKeyViolCntr  uint32 `json:"qkeyViolCntr"`
	SMSL          uint8  `json:"smSl"`
	PKeyTblLen    int    `json:"pkeyTblLen"`
	GIDTblLen     int    `json:"gidTblLen"`
	SubnetTimeout uint8  `json:"subnetTimeout"`
	InitTypeReply uint8  `json:"initTypeReply"`
	ActiveWidth   uint8  `json:"activeWidth"`
	ActiveSpeed   uint8  `json:"activeSpeed"`
	PhysState     uint8  `json:"physState"`
	GIDs          []GID  `json:"gids"`
}

// GID types (enum ibv_gid_type_sysfs), and what ibv_devinfo uses when the
// type cannot be read.
const (
	GIDTypeIBRoCEv1 = 0
	GIDTypeRoCEv2   = 1
	GIDTypeInvalid  = 2
)

// GID is one entry of a port's GID table that is not null.
type GID struct {
	Index int      `json:"index"`
	Raw   [16]byte `json:"-"`
	Type  int      `json:"type"`
}
