package mad

import "fmt"

// Class is a MAD management class (IBA table 130, byte 1 of the header).
type Class uint8

// Management classes.
const (
	ClassSMI          Class = 0x01 // subnet management, LID routed
	ClassSA           Class = 0x03 // subnet administration
	ClassPerf         Class = 0x04 // performance management
	ClassBM           Class = 0x05 // baseboard management
	ClassDevMgt       Class = 0x06 // device management
	ClassCM           Class = 0x07 // communication management
	ClassSNMP         Class = 0x08 // SNMP tunneling
	ClassVendor1First Class = 0x09 // first class of vendor range 1
	ClassVendor1Last  Class = 0x0f // last class of vendor range 1
	ClassCC           Class = 0x21 // congestion control
	ClassVendor2First Class = 0x30 // first class of vendor range 2 (with OUI)
	ClassVendor2Last  Class = 0x4f // last class of vendor range 2
	ClassSMIDirect    Class = 0x81 // subnet management, directed route
)

// className is the name of a class that has one. A switch, not a map: a
// package-level map is built by the package's init at every start of
// every tool.
func className(c Class) (string, bool) {
	switch c {
	case ClassSMI:
		return "SMI", true
	case ClassSA:
		return "SA", true
	case ClassPerf:
		return "PerfMgt", true
	case ClassBM:
		return "BM", true
	case ClassDevMgt:
		return "DevMgt", true
	case ClassCM:
		return "CM", true
	case ClassSNMP:
		return "SNMP", true
	case ClassCC:
		return "CC", true
	case ClassSMIDirect:
		return "SMI-DR", true
	}
	return "", false
}

// String names the class: "SMI", "SMI-DR", "SA", "PerfMgt", ..., "Vendor1(0x0a)",
// "Vendor2(0x32)", or "Class(0x..)" for a class without a name.
func (c Class) String() string {
	if s, ok := className(c); ok {
		return s
	}
	switch {
	case c.IsVendorRange1():
		return fmt.Sprintf("Vendor1(%#02x)", uint8(c))
	case c.IsVendorRange2():
		return fmt.Sprintf("Vendor2(%#02x)", uint8(c))
	}
	return fmt.Sprintf("Class(%#02x)", uint8(c))
}

// IsSMP reports whether the class is subnet management (LID routed or
// directed route), which travels on QP0.
func (c Class) IsSMP() bool { return c == ClassSMI || c == ClassSMIDirect }

// IsVendorRange1 reports whether the class is in vendor range 1 (0x09-0x0f).
func (c Class) IsVendorRange1() bool { return c >= ClassVendor1First && c <= ClassVendor1Last }

// IsVendorRange2 reports whether the class is in vendor range 2 (0x30-0x4f),
// whose MADs carry an OUI and may use RMPP.
func (c Class) IsVendorRange2() bool { return c >= ClassVendor2First && c <= ClassVendor2Last }

// QP returns the well-known queue pair the class uses: 0 for SMPs, 1 (the
// GSI) for every other class.
func (c Class) QP() uint32 {
	if c.IsSMP() {
		return 0
	}
	return 1
}
