package pingpong

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
)

// WireSize is the length of one address message on the wire: the
// characters of "0000:000000:000000:" and a 32-digit GID, and the C
// string's terminating NUL, which rdma-core sends too.
const WireSize = len("0000:000000:000000:00000000000000000000000000000000") + 1

// Dest is one side's queue pair address as the pingpongs exchange it.
type Dest struct {
	LID uint16
	QPN uint32 // 24 bits
	PSN uint32 // 24 bits
	GID [16]byte
}

// Global reports whether the peer is reached with a GRH: rdma-core
// routes globally when the GID's interface ID (its low 8 bytes) is not
// zero, which is the case for any GID a -g index read.
func (d Dest) Global() bool {
	for _, b := range d.GID[8:] {
		if b != 0 {
			return true
		}
	}
	return false
}

// Wire is the message rdma-core writes ("%04x:%06x:%06x:" and the GID's
// bytes in order as 32 hex digits, then a NUL): always WireSize bytes,
// QPN and PSN masked to their 24 bits.
func (d Dest) Wire() []byte {
	b := fmt.Appendf(make([]byte, 0, WireSize), "%04x:%06x:%06x:%x", d.LID, d.QPN&0xffffff, d.PSN&0xffffff, d.GID[:])
	return append(b, 0)
}

// ParseWire reads a message Wire wrote (or rdma-core did): the text up
// to the first NUL must be four colon-separated hex fields, the LID of at
// most 16 bits, the QPN and PSN of at most 24, and a 32-digit GID.
func ParseWire(msg []byte) (Dest, error) {
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	var d Dest
	f := bytes.Split(msg, []byte(":"))
	if len(f) != 4 {
		return d, fmt.Errorf("peer address %q: want LID:QPN:PSN:GID", msg)
	}
	nums := []struct {
		name string
		bits int
	}{{"LID", 16}, {"QPN", 24}, {"PSN", 24}}
	var v [3]uint64
	for i, n := range nums {
		x, err := strconv.ParseUint(string(f[i]), 16, n.bits)
		if err != nil || len(f[i]) > 8 {
			return d, fmt.Errorf("peer address %q: bad %s %q: want at most %d bits of hex", msg, n.name, f[i], n.bits)
		}
		v[i] = x
	}
	if len(f[3]) != 32 {
		return d, fmt.Errorf("peer address %q: GID %q is not 32 hex digits", msg, f[3])
	}
	if _, err := hex.Decode(d.GID[:], f[3]); err != nil {
		return d, fmt.Errorf("peer address %q: GID %q is not 32 hex digits", msg, f[3])
	}
	d.LID, d.QPN, d.PSN = uint16(v[0]), uint32(v[1]), uint32(v[2])
	return d, nil
}

// String is the address as the pingpongs print it after "local address:"
// or "remote address:" (the UD one differs; see ibv_ud_pingpong).
func (d Dest) String() string {
	return fmt.Sprintf("LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", d.LID, d.QPN, d.PSN, FormatGID(d.GID))
}
