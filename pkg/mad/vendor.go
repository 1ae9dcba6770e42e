package mad

// The vendor classes ibtool's tools speak: Mellanox's (vendstat) in vendor
// range 1, and OpenIB's ping and sysstat classes (ibping, ibsysstat) in
// vendor range 2, whose MADs carry OUIOpenIB.
const (
	ClassMellanox      Class = 0x0a // IB_MLX_VENDOR_CLASS
	ClassOpenIBPing    Class = 0x32 // IB_VENDOR_OPENIB_PING_CLASS
	ClassOpenIBSysstat Class = 0x33 // IB_VENDOR_OPENIB_SYSSTAT_CLASS

	// OUIOpenIB is the OUI of the OpenIB vendor classes.
	OUIOpenIB = 0x001405
)

// AttrGeneralInfoExt is GeneralInfo's ID: the extended layout is the same
// attribute as the devices HasExtendedFWInfo names answer it.
const AttrGeneralInfoExt = AttrGeneralInfo

// Mellanox InfiniScale III facts vendstat's -w reads by: the device ID
// GeneralInfo gives, and the config space address of port 0's
// PortXmitWait counter; port N's is N<<12 above it.
const (
	IS3DeviceID         = 47396
	IS3PortXmitWaitAddr = 0x10013c
)

// ConfigSpaceAccessMod returns the attribute modifier of a
// ConfigSpaceAccess of n records: the records' count in bits 16 to 23,
// and 2 in bits 22 and up as vendstat sends it.
func ConfigSpaceAccessMod(n int) uint32 { return 2<<22 | uint32(n)<<16 }

// MaxConfigSpaceRecords is how many records one ConfigSpaceAccess holds.
const MaxConfigSpaceRecords = len(ConfigSpaceAccess{}.Records)

// extFWInfoDevices are the device ID ranges, first and last, whose
// GeneralInfo is GeneralInfoExt's layout (vendstat.c's
// ext_fw_info_device: Switch-X, Switch-IB, Quantum, IS-4, ConnectX,
// BlueField and Bull's versions of them).
var extFWInfoDevices = [][2]uint16{
	{0x0245, 0x0245}, {0xc738, 0xc73b}, {0xcb20, 0xcb20}, {0xcf08, 0xcf08}, {0xd2f0, 0xd2f0},
	{0x01b3, 0x01b3}, {0x1003, 0x101b}, {0xa2d2, 0xa2d2}, {0x1b02, 0x1b02}, {0x1b50, 0x1b50},
	{0x1ba0, 0x1ba0}, {0x1bd0, 0x1bd5}, {0x1bf0, 0x1bf0}, {0x1b33, 0x1b33}, {0x1b73, 0x1b73},
	{0x1b40, 0x1b41}, {0x1b60, 0x1b61}, {0x1b83, 0x1b83}, {0x1b93, 0x1b94}, {0x1bb4, 0x1bb5},
	{0x1bc4, 0x1bc6},
}

// HasExtendedFWInfo reports whether a Mellanox device of the ID answers
// GeneralInfo in GeneralInfoExt's layout.
func HasExtendedFWInfo(deviceID uint16) bool {
	for _, r := range extFWInfoDevices {
		if r[0] <= deviceID && deviceID <= r[1] {
			return true
		}
	}
	return false
}

// Versions returns the firmware and software versions (major, minor, sub
// minor) of gi, the reply data of a GeneralInfo Get, read in the layout
// the device's ID gives.
func (gi *GeneralInfo) Versions(data []byte) (fw [3]uint32, sw [3]uint8, err error) {
	if !HasExtendedFWInfo(gi.DeviceID) {
		return [3]uint32{uint32(gi.FWMajor), uint32(gi.FWMinor), uint32(gi.FWSubMinor)}, [3]uint8{gi.SWMajor, gi.SWMinor, gi.SWSubMinor}, nil
	}
	var ext GeneralInfoExt
	if err := ext.UnmarshalBinary(data); err != nil {
		return fw, sw, err
	}
	return [3]uint32{ext.ExtFWMajor, ext.ExtFWMinor, ext.ExtFWSubMinor}, [3]uint8{ext.SWMajor, ext.SWMinor, ext.SWSubMinor}, nil
}

// PSIDString is a Mellanox firmware's PSID (parameter set ID): 16 bytes of
// text, NUL-padded.
type PSIDString [16]byte

// String returns the text up to the first NUL.
func (s PSIDString) String() string { return string(untilNUL(s[:])) }

// MarshalText returns the text up to the first NUL.
func (s PSIDString) MarshalText() ([]byte, error) { return untilNUL(s[:]), nil }
