package rdma

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// perftest's exchange over rdma_cm (-R, -z): after the rdma_cm connection
// of the exchange is made, the two sides trade fixed-layout messages,
// each one RC SEND into a receive of ptDestSize bytes; the client sends
// first and the server answers (ctx_xchg_data_rdma, ctx_hand_shake). In
// perftest 4.5's order (write_bw.c):
//
//	version        16 bytes, a NUL-terminated version number ("6.06")
//	cycle buffer   4 bytes big-endian (the page size)
//	cache line     4 bytes big-endian
//	MTU            2 bytes: the port's enum ibv_mtu in decimal and a NUL
//	dest           56 bytes (struct pingpong_dest, big-endian fields), as
//	               the handshakes: zero before and after the connection of
//	               the data QP (-R), then this side's QP and buffer three
//	               times, then once to start the run
//	report         size, iterations (8 bytes each), peak, average and
//	               message rate (IEEE doubles), big-endian, each its own
//	               message
//	dest           once to close
//
// The message sizes and layouts are perftest's (perftest_communication.c,
// struct pingpong_dest in perftest_resources.h).

// ptVersion is the version this side claims: perftest 4.5-0.17's (Debian
// bookworm), whose exchange it follows. perftest refuses peers under
// 5.70.
const ptVersion = "6.06"

// ptMinVersion is the oldest peer version whose exchange is this one
// (8-byte iteration counts from 5.33, the MTU exchange from 5.31, the
// cycle buffer from 5.32; perftest itself refuses peers under 5.70).
const ptMinVersion = 5.70

// Sizes of perftest's messages.
const (
	ptDestSize    = 56 // sizeof(struct pingpong_dest) on 64-bit Linux
	ptVersionSize = 16 // MAX_VERSION
	ptIntSize     = 4
	ptMTUSize     = 2 // char[2] from version 5.31
	ptU64Size     = 8
)

// ptDest is perftest's struct pingpong_dest: what a side tells its peer
// about its QP and buffer.
type ptDest struct {
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

// appendPTDest appends d as perftest writes it (rdma_write_keys): each
// field big-endian at its C offset, the padding after rkey zero.
func appendPTDest(b []byte, d ptDest) []byte {
	var m [ptDestSize]byte
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
	return append(b, m[:]...)
}

// parsePTDest decodes a peer's pingpong_dest. perftest reads neither the
// SRQ number nor the GID index back (rdma_read_keys); both are decoded
// here all the same.
func parsePTDest(b []byte) (ptDest, error) {
	if len(b) != ptDestSize {
		return ptDest{}, fmt.Errorf("a QP address of %d bytes, perftest's has %d", len(b), ptDestSize)
	}
	be := binary.BigEndian
	d := ptDest{LID: be.Uint32(b[0:]), OutReads: be.Uint32(b[4:]), QPN: be.Uint32(b[8:]), PSN: be.Uint32(b[12:]),
		RKey: be.Uint32(b[16:]), VAddr: be.Uint64(b[24:]), SRQN: be.Uint32(b[48:]), GIDIndex: int32(be.Uint32(b[52:]))}
	copy(d.GID[:], b[32:48])
	return d, nil
}

// appendPTVersion appends a version message: v NUL-padded to 16 bytes.
func appendPTVersion(b []byte, v string) []byte {
	var m [ptVersionSize]byte
	copy(m[:ptVersionSize-1], v)
	return append(b, m[:]...)
}

// parsePTVersion reads a peer's version message: the text up to the
// first NUL, which must be a number no older than ptMinVersion.
func parsePTVersion(b []byte) (string, error) {
	if len(b) != ptVersionSize {
		return "", fmt.Errorf("a version message of %d bytes, perftest's has %d", len(b), ptVersionSize)
	}
	v, _, ok := bytes.Cut(b, []byte{0})
	if !ok {
		return "", fmt.Errorf("the peer's version message has no NUL")
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return string(v), fmt.Errorf("the peer's version %q is not a number", v)
	}
	if f < ptMinVersion {
		return string(v), fmt.Errorf("the peer's perftest version %s is older than %.2f, whose exchange this follows", v, ptMinVersion)
	}
	return string(v), nil
}

// appendPTMTU appends the MTU message: m (enum ibv_mtu, 1 to 5) as one
// decimal digit and a NUL.
func appendPTMTU(b []byte, m int) []byte {
	return append(b, byte('0'+m%10), 0)
}

// parsePTMTU reads a peer's MTU message: an enum ibv_mtu, 1 (256 bytes)
// to 5 (4096).
func parsePTMTU(b []byte) (int, error) {
	if len(b) != ptMTUSize {
		return 0, fmt.Errorf("an MTU message of %d bytes, perftest's has %d", len(b), ptMTUSize)
	}
	s, _, _ := bytes.Cut(b, []byte{0})
	m, err := strconv.Atoi(string(s))
	if err != nil || m < 1 || m > 5 {
		return 0, fmt.Errorf("the peer's MTU %q is not one of 1 (256 bytes) to 5 (4096)", s)
	}
	return m, nil
}

// appendPTU32 and appendPTU64 append a big-endian integer message.
func appendPTU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendPTU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }

// parsePTU32 and parsePTU64 read a big-endian integer message.
func parsePTU32(b []byte) (uint32, error) {
	if len(b) != ptIntSize {
		return 0, fmt.Errorf("a 4-byte number in %d bytes", len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

func parsePTU64(b []byte) (uint64, error) {
	if len(b) != ptU64Size {
		return 0, fmt.Errorf("an 8-byte number in %d bytes", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// ptReport is a side's report of a message size as perftest exchanges it
// (struct bw_report_data without the per-port figures): in the units
// its sender reports in.
type ptReport struct {
	Size, Iters            uint64
	Peak, Average, MsgRate float64
}

// ptReportMessages are r's five messages in the order perftest sends
// them (xchg_bw_reports).
func ptReportMessages(r ptReport) [][]byte {
	return [][]byte{appendPTU64(nil, r.Size), appendPTU64(nil, r.Iters), appendPTU64(nil, math.Float64bits(r.Peak)),
		appendPTU64(nil, math.Float64bits(r.Average)), appendPTU64(nil, math.Float64bits(r.MsgRate))}
}

// parsePTReport reads the peer's five report messages.
func parsePTReport(msgs [][]byte) (ptReport, error) {
	if len(msgs) != 5 {
		return ptReport{}, fmt.Errorf("a report in %d messages, perftest's has 5", len(msgs))
	}
	var v [5]uint64
	for i, m := range msgs {
		x, err := parsePTU64(m)
		if err != nil {
			return ptReport{}, fmt.Errorf("report field %d: %w", i+1, err)
		}
		v[i] = x
	}
	return ptReport{Size: v[0], Iters: v[1], Peak: math.Float64frombits(v[2]), Average: math.Float64frombits(v[3]),
		MsgRate: math.Float64frombits(v[4])}, nil
}

// ptReportOf is this side's line as the report perftest sends.
func ptReportOf(r bwResult) ptReport {
	return ptReport{Size: uint64(r.Size), Iters: uint64(r.Iters), Peak: r.BWPeak, Average: r.BWAvg, MsgRate: r.MsgRate}
}

// result is the peer's report as a line of this side's table, in gbits'
// unit for the six-decimal rule (the figures stay the peer's).
func (r ptReport) result(gbits bool) bwResult {
	name := "MB/sec"
	if gbits {
		name = "Gb/sec"
	}
	return bwResult{Size: int(min(r.Size, math.MaxInt32)), Iters: int(min(r.Iters, math.MaxInt32)), BWPeak: r.Peak, BWAvg: r.Average,
		MsgRate: r.MsgRate, Unit: name, accurate: gbits && r.Average < 0.1}
}
