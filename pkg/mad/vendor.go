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
