package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
)

// MPA (RFC 5044) framing constants.
const (
	mpaKeyReq        = "MPA ID Req Frame"
	mpaKeyRep        = "MPA ID Rep Frame"
	mpaStartLen      = 20
	mpaMaxPD         = 512
	mpaMarkerSpacing = 512
	mpaMarkerLen     = 4
	mpaCRCLen        = 4
	mpaFlagMarkers   = 0x80
	mpaFlagCRC       = 0x40
	mpaFlagReject    = 0x20
	mpaFlagEnhanced  = 0x10
)

// castagnoli is the CRC32c table, made on first use: not at start-up,
// which every tool pays (init_test.go).
var (
	castagnoliOnce  sync.Once
	castagnoliTable *crc32.Table
)

func castagnoli() *crc32.Table {
	castagnoliOnce.Do(func() { castagnoliTable = crc32.MakeTable(crc32.Castagnoli) })
	return castagnoliTable
}

// MPAStartFrame is an MPA Request or Reply, the first bytes each side of
// an iWARP connection sends: whether the sender wants markers in what it
// receives, whether it wants CRCs, and its private data. A revision 2
// frame's private data starts with the enhanced connection setup (RFC
// 6581, V2); what the connection's user sent follows it, and ULP is that
// decoded when trace knows its format.
type MPAStartFrame struct {
	Request bool `json:"request"`
	Markers bool `json:"markers"`
	CRC     bool `json:"crc"`
	Reject  bool `json:"reject,omitempty"`
	// Enhanced is the flag Linux (siw, cxgb4) sets next to R on a
	// revision 2 frame whose private data starts with the IRD and ORD.
	Enhanced    bool            `json:"enhanced,omitempty"`
	Rev         uint8           `json:"rev"`
	PrivateData HexBytes        `json:"privateData,omitempty"`
	V2          *MPAV2Control   `json:"v2,omitempty"`
	ULP         *ConnectPrivate `json:"ulp,omitempty"`
}

// DecodeMPAStart decodes an MPA Request or Reply frame at the start of b
// and returns it with its length.
func DecodeMPAStart(b []byte) (*MPAStartFrame, int, error) {
	if len(b) < mpaStartLen {
		return nil, 0, fmt.Errorf("MPA start frame: %w", errShort)
	}
	f := &MPAStartFrame{}
	switch string(b[:16]) {
	case mpaKeyReq:
		f.Request = true
	case mpaKeyRep:
	default:
		return nil, 0, errors.New("MPA start frame: no MPA key")
	}
	f.Markers, f.CRC, f.Reject = b[16]&mpaFlagMarkers != 0, b[16]&mpaFlagCRC != 0, b[16]&mpaFlagReject != 0
	f.Enhanced = b[16]&mpaFlagEnhanced != 0
	f.Rev = b[17]
	n := int(binary.BigEndian.Uint16(b[18:]))
	if n > mpaMaxPD {
		return nil, 0, fmt.Errorf("MPA start frame: %d bytes of private data, at most %d allowed", n, mpaMaxPD)
	}
	if len(b) < mpaStartLen+n {
		return nil, 0, fmt.Errorf("MPA start frame private data: %w", errShort)
	}
	f.PrivateData = b[mpaStartLen : mpaStartLen+n]
	ulp := []byte(f.PrivateData)
	if f.Rev == 2 && len(ulp) >= mpaV2ControlLen {
		f.V2 = decodeMPAV2Control(ulp)
		ulp = ulp[mpaV2ControlLen:]
	}
	f.ULP = decodeConnectPrivate(ulp)
	return f, mpaStartLen + n, nil
}

// AppendBinary encodes the frame after b.
func (f *MPAStartFrame) AppendBinary(b []byte) []byte {
	key := mpaKeyRep
	if f.Request {
		key = mpaKeyReq
	}
	var flags byte
	if f.Markers {
		flags |= mpaFlagMarkers
	}
	if f.CRC {
		flags |= mpaFlagCRC
	}
	if f.Reject {
		flags |= mpaFlagReject
	}
	if f.Enhanced {
		flags |= mpaFlagEnhanced
	}
	b = append(append(b, key...), flags, f.Rev)
	b = binary.BigEndian.AppendUint16(b, uint16(len(f.PrivateData)))
	return append(b, f.PrivateData...)
}

// MPAFramer frames ULPDUs (DDP segments) into FPDUs as one side of a
// connection sends them: length, ULPDU, pad, CRC field, and a marker at
// every 512th byte of the stream from the first FPDU on. The CRC field is
// in every FPDU (RFC 5044 section 4.1); without CRC it is zero, as Linux's
// siw sends it. Tests and tools use it to make iWARP streams.
type MPAFramer struct {
	Markers, CRC bool
	// Pos is the stream offset from the first FPDU byte.
	Pos uint64
}

// Append frames one ULPDU after b.
func (m *MPAFramer) Append(b, ulpdu []byte) []byte {
	fpdu := binary.BigEndian.AppendUint16(nil, uint16(len(ulpdu)))
	fpdu = append(fpdu, ulpdu...)
	fpdu = append(fpdu, make([]byte, (4-len(fpdu)%4)%4)...)
	start := m.Pos
	// Lay the FPDU into the stream with markers; the CRC covers them.
	var raw []byte
	put := func(data []byte) {
		for _, c := range data {
			if m.Markers && m.Pos%mpaMarkerSpacing == 0 {
				raw = binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(raw, 0), uint16(m.Pos-start))
				m.Pos += mpaMarkerLen
			}
			raw = append(raw, c)
			m.Pos++
		}
	}
	put(fpdu)
	// A marker due right before the CRC goes in ahead of it.
	if m.Markers && m.Pos%mpaMarkerSpacing == 0 {
		raw = binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(raw, 0), uint16(m.Pos-start))
		m.Pos += mpaMarkerLen
	}
	var c uint32
	if m.CRC {
		c = crc32.Checksum(raw, castagnoli())
	}
	raw = binary.LittleEndian.AppendUint32(raw, c)
	m.Pos += mpaCRCLen
	return append(b, raw...)
}

// mpaReader reads FPDUs from a run of stream bytes, skipping markers.
type mpaReader struct {
	data    []byte
	base    uint64 // stream offset of data[0], from the first FPDU byte
	markers bool
	crc     bool
}

// fpdu is one FPDU read from the stream.
type fpdu struct {
	start, end uint64 // stream offsets
	ulpdu      []byte
	crcStatus  ICRCStatus
	crc, want  uint32
	marker     string // a marker that does not point at the FPDU
}

var errFPDUShort = errors.New("the FPDU runs past the captured bytes")

// read reads the FPDU that starts at stream offset at.
func (r *mpaReader) read(at uint64) (*fpdu, error) {
	if !r.markers {
		return r.readPlain(at)
	}
	f := &fpdu{start: at}
	pos := at
	var raw []byte
	take := func(n int) ([]byte, error) {
		out := make([]byte, 0, n)
		for len(out) < n {
			if r.markers && pos%mpaMarkerSpacing == 0 {
				i := pos - r.base
				if i+mpaMarkerLen > uint64(len(r.data)) {
					return nil, errFPDUShort
				}
				mk := r.data[i : i+mpaMarkerLen]
				if ptr := uint64(binary.BigEndian.Uint16(mk[2:])); ptr != pos-at && f.marker == "" {
					f.marker = fmt.Sprintf("marker at stream byte %d points %d bytes back, the FPDU starts %d bytes back", pos, ptr, pos-at)
				}
				raw = append(raw, mk...)
				pos += mpaMarkerLen
				continue
			}
			i := pos - r.base
			if i >= uint64(len(r.data)) {
				return nil, errFPDUShort
			}
			k := min(uint64(n-len(out)), uint64(len(r.data))-i)
			if r.markers {
				k = min(k, mpaMarkerSpacing-pos%mpaMarkerSpacing)
			}
			out = append(out, r.data[i:i+k]...)
			raw = append(raw, r.data[i:i+k]...)
			pos += k
		}
		return out, nil
	}
	hdr, err := take(2)
	if err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr))
	// Room for the body, its markers and the CRC in one allocation.
	raw = append(make([]byte, 0, len(raw)+n+8+mpaMarkerLen*(n/mpaMarkerSpacing+2)), raw...)
	body, err := take(n + (4-(n+2)%4)%4)
	if err != nil {
		return nil, err
	}
	f.ulpdu = body[:n]
	if pos%mpaMarkerSpacing == 0 {
		i := pos - r.base
		if i+mpaMarkerLen > uint64(len(r.data)) {
			return nil, errFPDUShort
		}
		raw = append(raw, r.data[i:i+mpaMarkerLen]...)
		pos += mpaMarkerLen
	}
	i := pos - r.base
	if i+mpaCRCLen > uint64(len(r.data)) {
		return nil, errFPDUShort
	}
	if r.crc {
		c := r.data[i : i+mpaCRCLen]
		f.want = crc32.Checksum(raw, castagnoli())
		f.crc = binary.LittleEndian.Uint32(c)
		f.crcStatus = ICRCGood
		if f.crc != f.want && binary.BigEndian.Uint32(c) != f.want {
			f.crcStatus = ICRCBad
		}
	}
	pos += mpaCRCLen
	f.end = pos
	return f, nil
}

// looksLikeFPDU reports whether b, one TCP segment's payload, is exactly
// one FPDU holding a plausible DDP segment, with a good CRC (crc) or a
// zero CRC field (no CRC): how trace finds iWARP connections whose MPA
// start frames it did not see.
func looksLikeFPDU(b []byte) (crc, ok bool) {
	if len(b) < 2+14 {
		return false, false
	}
	n := int(binary.BigEndian.Uint16(b))
	padded := 2 + n + (4-(n+2)%4)%4
	if !plausibleDDP(b[2:min(len(b), 2+n)]) {
		return false, false
	}
	if len(b) != padded+mpaCRCLen {
		return false, false
	}
	got := binary.LittleEndian.Uint32(b[padded:])
	if got == 0 {
		return false, true
	}
	c := crc32.Checksum(b[:padded], castagnoli())
	return true, c == got || c == binary.BigEndian.Uint32(b[padded:])
}

// isMPAStart reports whether b begins with an MPA Request or Reply key.
func isMPAStart(b []byte) bool {
	return bytes.HasPrefix(b, []byte(mpaKeyReq)) || bytes.HasPrefix(b, []byte(mpaKeyRep))
}

// readPlain reads an FPDU of a stream without markers: one slice of the
// bytes, nothing copied.
func (r *mpaReader) readPlain(at uint64) (*fpdu, error) {
	i := at - r.base
	if i+2 > uint64(len(r.data)) {
		return nil, errFPDUShort
	}
	n := int(binary.BigEndian.Uint16(r.data[i:]))
	padded := uint64(2 + n + (4-(n+2)%4)%4)
	end := i + padded + mpaCRCLen
	if end > uint64(len(r.data)) {
		return nil, errFPDUShort
	}
	f := &fpdu{start: at, end: r.base + end, ulpdu: r.data[i+2 : i+2+uint64(n)]}
	if r.crc {
		c := r.data[i+padded : end]
		f.want = crc32.Checksum(r.data[i:i+padded], castagnoli())
		f.crc = binary.LittleEndian.Uint32(c)
		f.crcStatus = ICRCGood
		if f.crc != f.want && binary.BigEndian.Uint32(c) != f.want {
			f.crcStatus = ICRCBad
		}
	}
	return f, nil
}
