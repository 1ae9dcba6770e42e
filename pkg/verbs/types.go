package verbs

import "errors"

// ErrNoVerbs is returned by a build without libibverbs.
var ErrNoVerbs = errors.New("ibtool was built without verbs (CGO_ENABLED=0 or -tags noverbs)")

// Transport types (enum ibv_transport_type).
const (
	TransportUnknown     = -1
	TransportIB          = 0
	TransportIWARP       = 1
	TransportUSNIC       = 2
	TransportUSNICUDP    = 3
	TransportUnspecified = 4
)

// Link layers (IBV_LINK_LAYER_*).
const (
	LinkLayerUnspecified = 0
	LinkLayerInfiniBand  = 1
	LinkLayerEthernet    = 2
)

// Device is one RDMA device as libibverbs opens and queries it.
type Device struct {
	Name         string `json:"name"`
	Transport    int    `json:"transport"`
	IBDevPath    string `json:"-"` // the sysfs directory libibverbs read it from
	FWVer        string `json:"fwVer"`
	NodeGUID     uint64 `json:"nodeGUID"`
	SysImageGUID uint64 `json:"sysImageGUID"`
	VendorID     uint32 `json:"vendorId"`
	VendorPartID uint32 `json:"vendorPartId"`
	HWVer        uint32 `json:"hwVer"`
	PhysPortCnt  int    `json:"physPortCnt"`
	Ports        []Port `json:"ports"`
}

// Port is one port's attributes (struct ibv_port_attr).
type Port struct {
	Num       int    `json:"port"`
	State     int    `json:"state"`
	MaxMTU    int    `json:"maxMtu"`
	ActiveMTU int    `json:"activeMtu"`
	SMLID     uint16 `json:"smLid"`
	LID       uint16 `json:"lid"`
	LMC       uint8  `json:"lmc"`
	LinkLayer int    `json:"linkLayer"`
}
