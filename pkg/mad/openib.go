package mad

import "bytes"

// The data of a vendor range 2 class's MAD follows the MAD header, the
// RMPP header, a reserved byte and the class's OUI: one MAD
// carries Vendor2DataLen bytes of it.
const (
	Vendor2DataOffset = 40
	Vendor2DataLen    = Size - Vendor2DataOffset
	vendor2OUIOffset  = 37
)

// The attributes of the OpenIB sysstat class (ibsysstat's ops). The ping
// class's requests name no attribute.
const (
	AttrSysstatPing AttrID = 0x10 // IB_PING_ATTR
	AttrSysstatHost AttrID = 0x11 // IB_HOSTINFO_ATTR
	AttrSysstatCPU  AttrID = 0x12 // IB_CPUINFO_ATTR
)

// Vendor2OUI returns the OUI of m, a MAD of a vendor range 2 class, or 0
// when m ends before it.
func Vendor2OUI(m []byte) uint32 {
	if len(m) < Vendor2DataOffset {
		return 0
	}
	o := m[vendor2OUIOffset:Vendor2DataOffset]
	return uint32(o[0])<<16 | uint32(o[1])<<8 | uint32(o[2])
}

// OUIBytes returns oui as its three bytes, most significant first, as a
// umad agent registers it.
func OUIBytes(oui uint32) [3]byte { return [3]byte{byte(oui >> 16), byte(oui >> 8), byte(oui)} }

// OpenIBText is the data of the OpenIB ping and sysstat classes' MADs:
// text ended by a NUL and padded with NULs to one MAD's data. A sysstat
// server's CPU list longer than that goes whole, with its NUL, over RMPP.
type OpenIBText string

// UnmarshalBinary sets t to data's text: up to its first NUL, or all of
// data without one.
func (t *OpenIBText) UnmarshalBinary(data []byte) error {
	*t = OpenIBText(untilNUL(data))
	return nil
}

// AppendBinary appends t and its NUL to b, then NULs up to Vendor2DataLen
// bytes in all; a longer t goes whole (for RMPP), Fit cuts it to one MAD.
func (t OpenIBText) AppendBinary(b []byte) ([]byte, error) {
	n := len(b)
	b = append(append(b, t...), 0)
	for len(b)-n < Vendor2DataLen {
		b = append(b, 0)
	}
	return b, nil
}

// MarshalBinary returns t's encoding (AppendBinary).
func (t OpenIBText) MarshalBinary() ([]byte, error) { return t.AppendBinary(nil) }

// Fit returns t cut to what one MAD's data holds with the NUL.
func (t OpenIBText) Fit() OpenIBText {
	if len(t) >= Vendor2DataLen {
		return t[:Vendor2DataLen-1]
	}
	return t
}

// OpenIBResponse returns the GetResp to req, a Get of a vendor range 2
// class, carrying text: one MAD, or where text does not fit one, the whole
// message with its RMPP header marking the first of its data segments, for
// RMPPSends.Send or a transport that segments it (segmented is then set).
// req must hold the MAD's headers, Vendor2DataOffset bytes.
func OpenIBResponse(req []byte, text OpenIBText) (msg []byte, segmented bool, err error) {
	if len(req) < Vendor2DataOffset {
		return nil, false, &ShortError{What: "vendor range 2 MAD headers", Need: Vendor2DataOffset, Have: len(req)}
	}
	msg, _ = text.AppendBinary(append([]byte(nil), req[:Vendor2DataOffset]...))
	msg[3] = byte(MethodGetResp)
	if len(msg) <= Size {
		return msg, false, nil
	}
	rmpp := RMPPHeader{Version: 1, Type: RMPPTypeData, Flags: RMPPActive, RespTime: rmppRespTime}
	if err := rmpp.MarshalTo(msg); err != nil {
		return nil, false, err
	}
	return msg, true, nil
}

// rmppRespTime is the RRespTime an OpenIB server's RMPP answer gives:
// 4.096 µs times 2 to the 14th, about 67 ms.
const rmppRespTime = 14

// untilNUL returns b up to its first NUL, or all of b without one.
func untilNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}
