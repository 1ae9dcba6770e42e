package pingpong

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

// XRCWireSize is the length of ibv_xsrq_pingpong's address message:
// "%04x:%06x:%06x:%06x:%06x:%32s" and its NUL.
const XRCWireSize = len("0000:000000:000000:000000:000000:00000000000000000000000000000000") + 1

// xrcEnd is the termination message each side sends when it is done:
// "END" and its NUL.
var xrcEnd = []byte("END\x00")

// XRCDest is one side's address in ibv_xsrq_pingpong: its LID, the XRC
// receive (target) and send (initiator) QP numbers, the PSN, the number
// of its XRC SRQ, which the peer's sends name, and the GID.
type XRCDest struct {
	LID              uint16
	RecvQPN, SendQPN uint32
	PSN              uint32
	SRQN             uint32
	GID              [16]byte
}

// Global reports whether the peer is reached with a GRH (its GID has an
// interface ID), as Dest.Global.
func (d XRCDest) Global() bool { return Dest{GID: d.GID}.Global() }

// Wire is the message rdma-core writes: always XRCWireSize bytes, the
// 24-bit fields masked.
func (d XRCDest) Wire() []byte {
	const m = 0xffffff
	b := fmt.Appendf(make([]byte, 0, XRCWireSize), "%04x:%06x:%06x:%06x:%06x:%x", d.LID, d.RecvQPN&m, d.SendQPN&m, d.PSN&m, d.SRQN&m, d.GID[:])
	return append(b, 0)
}

// ParseXRCWire reads a message XRCDest.Wire wrote (or rdma-core did): up
// to the first NUL, five colon-separated hex fields (the LID of at most
// 16 bits, the rest of at most 24) and a 32-digit GID.
func ParseXRCWire(msg []byte) (XRCDest, error) {
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	var d XRCDest
	f := bytes.Split(msg, []byte(":"))
	if len(f) != 6 {
		return d, fmt.Errorf("peer address %q: want LID:RECV_QPN:SEND_QPN:PSN:SRQN:GID", msg)
	}
	names := []string{"LID", "receive QPN", "send QPN", "PSN", "SRQN"}
	var v [5]uint64
	for i, name := range names {
		bits := 24
		if i == 0 {
			bits = 16
		}
		x, err := strconv.ParseUint(string(f[i]), 16, bits)
		if err != nil || len(f[i]) > 8 {
			return d, fmt.Errorf("peer address %q: bad %s %q: want at most %d bits of hex", msg, name, f[i], bits)
		}
		v[i] = x
	}
	if len(f[5]) != 32 {
		return d, fmt.Errorf("peer address %q: GID %q is not 32 hex digits", msg, f[5])
	}
	if _, err := hex.Decode(d.GID[:], f[5]); err != nil {
		return d, fmt.Errorf("peer address %q: GID %q is not 32 hex digits", msg, f[5])
	}
	d.LID, d.RecvQPN, d.SendQPN, d.PSN, d.SRQN = uint16(v[0]), uint32(v[1]), uint32(v[2]), uint32(v[3]), uint32(v[4])
	return d, nil
}

// Line is the address as ibv_xsrq_pingpong prints it, who being "local"
// or "remote" (right-aligned in 8 columns):
//
//	local: LID 0000, QPN RECV 000011 SEND 000012, PSN 5b1f3a, SRQN 000001, GID fe80::1
func (d XRCDest) Line(who string) string {
	return fmt.Sprintf("%8s: LID %04x, QPN RECV %06x SEND %06x, PSN %06x, SRQN %06x, GID %s\n",
		who, d.LID, d.RecvQPN, d.SendQPN, d.PSN, d.SRQN, FormatGID(d.GID))
}

// SendXRC writes d's message.
func (c *Conn) SendXRC(d XRCDest) error {
	if _, err := c.c.Write(d.Wire()); err != nil {
		return fmt.Errorf("couldn't send local address: %w", err)
	}
	return nil
}

// RecvXRC reads one XRC address message and parses it.
func (c *Conn) RecvXRC() (XRCDest, error) {
	msg := make([]byte, XRCWireSize)
	if n, err := io.ReadFull(c.c, msg); err != nil {
		return XRCDest{}, fmt.Errorf("%d/%d: couldn't read remote address: %w", n, XRCWireSize, err)
	}
	return ParseXRCWire(msg)
}

// SendEnd writes the termination message.
func (c *Conn) SendEnd() error {
	if _, err := c.c.Write(xrcEnd); err != nil {
		return fmt.Errorf("couldn't send termination ack: %w", err)
	}
	return nil
}

// RecvEnd reads the peer's termination message.
func (c *Conn) RecvEnd() error {
	msg := make([]byte, len(xrcEnd))
	if n, err := io.ReadFull(c.c, msg); err != nil {
		return fmt.Errorf("%d/%d: couldn't read remote termination ack: %w", n, len(xrcEnd), err)
	}
	if !bytes.Equal(msg, xrcEnd) {
		return fmt.Errorf("invalid termination ack %q was accepted", msg)
	}
	return nil
}
