package madtest

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/ibtool/ibtool/pkg/mad"
)

// Handler answers one request: the packets it returns are delivered to
// Recv in order. Returning none leaves the request unanswered (a timeout).
type Handler func(req *mad.Packet) []mad.Packet

// Transport is an in-memory mad.Transport driven by a Handler.
type Transport struct {
	handler Handler
	queue   chan mad.Packet
	sends   atomic.Int64
	closed  chan struct{}
	once    sync.Once
}

var _ mad.Transport = (*Transport)(nil)

// New returns a Transport that answers with h.
func New(h Handler) *Transport {
	return &Transport{handler: h, queue: make(chan mad.Packet, 1024), closed: make(chan struct{})}
}

// Send hands the request to the handler and queues its answers.
func (t *Transport) Send(ctx context.Context, p *mad.Packet) error {
	select {
	case <-t.closed:
		return fmt.Errorf("madtest: send: %w", mad.ErrClosed)
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t.sends.Add(1)
	req := mad.Packet{MAD: append([]byte(nil), p.MAD...), Addr: p.Addr, Timeout: p.Timeout}
	for _, r := range t.handler(&req) {
		t.queue <- r
	}
	return nil
}

// Recv returns the next queued answer.
func (t *Transport) Recv(ctx context.Context, p *mad.Packet) error {
	select {
	case r := <-t.queue:
		p.MAD = append(p.MAD[:0], r.MAD...)
		p.Addr, p.Status = r.Addr, r.Status
		return nil
	case <-t.closed:
		return fmt.Errorf("madtest: recv: %w", mad.ErrClosed)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// LocalPort names a made-up local port.
func (t *Transport) LocalPort() mad.LocalPort { return mad.LocalPort{Device: "madtest0", Port: 1} }

// Close makes Send and Recv fail.
func (t *Transport) Close() error {
	t.once.Do(func() { close(t.closed) })
	return nil
}

// Sends returns how many requests were sent.
func (t *Transport) Sends() int { return int(t.sends.Load()) }

// Reply returns the response to req: the same MAD with the method's R bit
// set, status st, and data copied at offset off.
func Reply(req *mad.Packet, st mad.Status, off int, data []byte) mad.Packet {
	m := append([]byte(nil), req.MAD...)
	m[3] |= byte(mad.ResponseBit)
	if m[1] == byte(mad.ClassSMIDirect) {
		st |= mad.DirectionBit
	}
	binary.BigEndian.PutUint16(m[4:], uint16(st))
	copy(m[off:], data)
	return mad.Packet{MAD: m, Addr: req.Addr}
}

// Dropped returns the request back with status ETIMEDOUT, as ibsim returns
// a MAD its error injection dropped and the kernel a timed-out request.
func Dropped(req *mad.Packet) mad.Packet {
	return mad.Packet{MAD: append([]byte(nil), req.MAD...), Addr: req.Addr, Status: syscall.ETIMEDOUT}
}

// TID returns the transaction ID of a request.
func TID(req *mad.Packet) uint64 { return binary.BigEndian.Uint64(req.MAD[8:]) }

// Deliver queues p for Recv as if it came from the fabric, for a
// responder that sends on its own timers (RMPPResponder.Resend).
func (t *Transport) Deliver(p mad.Packet) {
	select {
	case t.queue <- p:
	case <-t.closed:
	}
}
