package perftest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Version is the version this side claims: perftest 4.5-0.17's (Debian
// bookworm), whose exchange this package follows.
const Version = "6.06"

// MinVersion is the oldest peer version whose exchange is this one
// (8-byte iteration counts from 5.33, the MTU exchange from 5.31, the
// cycle buffer from 5.32; perftest itself refuses peers under 5.70).
const MinVersion = 5.70

// Sizes of the exchange's messages.
const (
	DestSize    = 56 // sizeof(struct pingpong_dest) on 64-bit Linux; every receive's size
	VersionSize = 16 // MAX_VERSION
	MTUSize     = 2  // char[2], from version 5.31
)

// Dest is perftest's struct pingpong_dest: what a side tells its peer
// about its QP and buffer.
type Dest struct {
	LID      uint32
	OutReads uint32
	QPN      uint32
	PSN      uint32
	RKey     uint32
	VAddr    uint64
	GID      [16]byte
	SRQN     uint32
	GIDIndex int32
}

// AppendBinary appends d as perftest writes it (rdma_write_keys): each
// field big-endian at its C offset, the padding after RKey zero.
func (d Dest) AppendBinary(b []byte) ([]byte, error) {
	var m [DestSize]byte
	be := binary.BigEndian
	be.PutUint32(m[0:], d.LID)
	be.PutUint32(m[4:], d.OutReads)
	be.PutUint32(m[8:], d.QPN)
	be.PutUint32(m[12:], d.PSN)
	be.PutUint32(m[16:], d.RKey)
	be.PutUint64(m[24:], d.VAddr)
	copy(m[32:48], d.GID[:])
	be.PutUint32(m[48:], d.SRQN)
	be.PutUint32(m[52:], uint32(d.GIDIndex))
	return append(b, m[:]...), nil
}

// MarshalBinary returns d's 56 bytes.
func (d Dest) MarshalBinary() ([]byte, error) {
	return d.AppendBinary(make([]byte, 0, DestSize))
}

// UnmarshalBinary decodes a peer's pingpong_dest, which must be 56 bytes.
// perftest reads neither the SRQ number nor the GID index back
// (rdma_read_keys); both are decoded all the same.
func (d *Dest) UnmarshalBinary(b []byte) error {
	if len(b) != DestSize {
		return &SizeError{What: "a QP address", Got: len(b), Want: DestSize}
	}
	be := binary.BigEndian
	*d = Dest{LID: be.Uint32(b[0:]), OutReads: be.Uint32(b[4:]), QPN: be.Uint32(b[8:]), PSN: be.Uint32(b[12:]),
		RKey: be.Uint32(b[16:]), VAddr: be.Uint64(b[24:]), SRQN: be.Uint32(b[48:]), GIDIndex: int32(be.Uint32(b[52:]))}
	copy(d.GID[:], b[32:48])
	return nil
}

// AppendVersion appends a version message: v NUL-padded to 16 bytes (cut
// to 15).
func AppendVersion(b []byte, v string) []byte {
	var m [VersionSize]byte
	copy(m[:VersionSize-1], v)
	return append(b, m[:]...)
}

// ParseVersion reads a peer's version message: the text up to the first
// NUL, which must be a number no older than MinVersion. The text is
// returned whenever there is one, with the error that it is too old or
// not a number.
func ParseVersion(b []byte) (string, error) {
	if len(b) != VersionSize {
		return "", &SizeError{What: "a version message", Got: len(b), Want: VersionSize}
	}
	v, _, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return "", fmt.Errorf("the peer's version message has no NUL")
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return string(v), fmt.Errorf("the peer's version %q is not a number", v)
	}
	if f < MinVersion {
		return string(v), fmt.Errorf("the peer's perftest version %s is older than %.2f, whose exchange this follows", v, MinVersion)
	}
	return string(v), nil
}

// AppendMTU appends the MTU message: m (enum ibv_mtu, 1 to 5) as one
// decimal digit and a NUL.
func AppendMTU(b []byte, m int) []byte {
	return append(b, byte('0'+m%10), 0)
}

// ParseMTU reads a peer's MTU message: an enum ibv_mtu, 1 (256 bytes) to
// 5 (4096).
func ParseMTU(b []byte) (int, error) {
	if len(b) != MTUSize {
		return 0, &SizeError{What: "an MTU message", Got: len(b), Want: MTUSize}
	}
	s, _, _ := bytes.Cut(b, []byte{0})
	m, err := strconv.Atoi(string(s))
	if err != nil || m < 1 || m > 5 {
		return 0, fmt.Errorf("the peer's MTU %q is not one of 1 (256 bytes) to 5 (4096)", s)
	}
	return m, nil
}

// AppendUint32 appends a 4-byte integer message (the cycle buffer, the
// cache line), big-endian.
func AppendUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

// ParseUint32 reads a 4-byte integer message.
func ParseUint32(b []byte) (uint32, error) {
	if len(b) != 4 {
		return 0, &SizeError{What: "a 4-byte number", Got: len(b), Want: 4}
	}
	return binary.BigEndian.Uint32(b), nil
}

// Report is a side's report of one message size as perftest exchanges
// it (struct bw_report_data without the per-port figures), in the units
// its sender reports in.
type Report struct {
	Size, Iters            uint64
	Peak, Average, MsgRate float64
}

// reportMessages is how many messages a Report takes.
const reportMessages = 5

// Messages are r's five 8-byte messages in the order perftest sends them
// (xchg_bw_reports; the doubles as hton_double sends them).
func (r Report) Messages() [][]byte {
	v := [reportMessages]uint64{r.Size, r.Iters, math.Float64bits(r.Peak), math.Float64bits(r.Average), math.Float64bits(r.MsgRate)}
	msgs := make([][]byte, len(v))
	for i, x := range v {
		msgs[i] = binary.BigEndian.AppendUint64(nil, x)
	}
	return msgs
}

// ParseReport reads a peer's five report messages.
func ParseReport(msgs [][]byte) (Report, error) {
	if len(msgs) != reportMessages {
		return Report{}, &SizeError{What: "a report", Got: len(msgs), Want: reportMessages, Messages: true}
	}
	var v [reportMessages]uint64
	for i, m := range msgs {
		if len(m) != 8 {
			return Report{}, fmt.Errorf("report field %d: %w", i+1, &SizeError{What: "an 8-byte number", Got: len(m), Want: 8})
		}
		v[i] = binary.BigEndian.Uint64(m)
	}
	return Report{Size: v[0], Iters: v[1], Peak: math.Float64frombits(v[2]), Average: math.Float64frombits(v[3]),
		MsgRate: math.Float64frombits(v[4])}, nil
}

// SizeError is a message (or a report) of the wrong size.
type SizeError struct {
	What      string // the message, with its article: "a QP address", "an MTU message", ...
	Got, Want int    // its size and perftest's
	Messages  bool   // the sizes count messages, not bytes
}

func (e *SizeError) Error() string {
	unit := "bytes"
	if e.Messages {
		unit = "messages"
	}
	return fmt.Sprintf("%s of %d %s, perftest's has %d", e.What, e.Got, unit, e.Want)
}
