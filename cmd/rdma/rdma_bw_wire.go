package rdma

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// The out-of-band channel of rdma_bw: one TCP connection carrying one
// JSON document a line, in a fixed order (each names its kind, so a side
// that gets out of step says so instead of misreading):
//
//	client -> server  params     the test parameters; the server adopts them
//	both              dest       QP number, PSN, LID, GID, rkey, buffer address, MTU
//	both              ready      after moving the QP to RTS
//	per message size:
//	both              go         the receive buffer is cleared; start
//	both              result     the sender's stats and the checksum of what it sent
//	both              check      the checksum of what arrived
//
// It is rdma_bw's own: perftest's exchange is a fixed-width text message
// and the two do not talk to each other.

// bwParams are the test parameters the client sends.
type bwParams struct {
	Size     int    `json:"size"`
	Iters    int    `json:"iterations"`
	Duration int    `json:"duration"`
	All      bool   `json:"allSizes"`
	Bidir    bool   `json:"bidirectional"`
	TxDepth  int    `json:"txDepth"`
	CQMod    int    `json:"cqModeration"`
	Inline   int    `json:"inline"`
	NoPeak   bool   `json:"noPeak"`
	Seed     uint64 `json:"seed"`
}

// bwDest is what a side tells its peer about its QP and buffer.
type bwDest struct {
	LID  uint16   `json:"lid"`
	QPN  uint32   `json:"qpn"`
	PSN  uint32   `json:"psn"`
	GID  [16]byte `json:"gid"`
	RKey uint32   `json:"rkey"`
	Addr uint64   `json:"vaddr"`
	MTU  int      `json:"mtu"` // enum ibv_mtu of the side's port
}

// bwResultMsg is a side's report after a size: its send stats (nil when
// it did not send) and the checksum of the bytes it sent.
type bwResultMsg struct {
	Stats   *bwStats `json:"stats,omitempty"`
	SentSum string   `json:"sentSum,omitempty"`
}

// bwCheckMsg is the checksum of the bytes that arrived at a side.
type bwCheckMsg struct {
	RecvSum string `json:"recvSum,omitempty"`
}

// bwGo starts one message size.
type bwGo struct {
	Size int `json:"size"`
}

// bwEnvelope carries one message and its kind.
type bwEnvelope struct {
	Kind string          `json:"kind"`
	Body json.RawMessage `json:"body"`
}

// bwPeer is the TCP connection to the other side.
type bwPeer struct {
	conn net.Conn
	r    *bufio.Reader
	role string // the peer's role, for messages: "server" or "client"
}

func newBwPeer(conn net.Conn, role string) *bwPeer {
	return &bwPeer{conn: conn, r: bufio.NewReader(conn), role: role}
}

// appendBwMessage appends one line of the channel: message v of kind in
// its envelope.
func appendBwMessage(b []byte, kind string, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	line, err := json.Marshal(bwEnvelope{Kind: kind, Body: body})
	if err != nil {
		return b, err
	}
	return append(append(b, line...), '\n'), nil
}

// decodeBwMessage decodes one line of the channel. It returns the kind
// the line says; v holds the message only when that is kind (a message
// of another kind is left undecoded). The error is the line's or the
// body's that does not parse.
func decodeBwMessage(line []byte, kind string, v any) (string, error) {
	var e bwEnvelope
	if err := json.Unmarshal(line, &e); err != nil {
		return "", err
	}
	if e.Kind != kind {
		return e.Kind, nil
	}
	return e.Kind, json.Unmarshal(e.Body, v)
}

// send writes one message of kind.
func (p *bwPeer) send(kind string, v any) error {
	line, err := appendBwMessage(nil, kind, v)
	if err != nil {
		return err
	}
	if _, err := p.conn.Write(line); err != nil {
		return fmt.Errorf("sending %s to the %s: %w", kind, p.role, err)
	}
	return nil
}

// recv reads the next message, which must be of kind, into v.
func (p *bwPeer) recv(kind string, v any) error {
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the %s closed the connection while this side waited for its %s", p.role, kind)
		}
		return fmt.Errorf("waiting for the %s's %s: %w", p.role, kind, err)
	}
	got, err := decodeBwMessage(line, kind, v)
	if err != nil {
		return fmt.Errorf("the %s's %s does not parse: %w", p.role, kind, err)
	}
	if got != kind {
		return fmt.Errorf("the %s sent %q where this side expected %q: are both rdma_bw of the same version?", p.role, got, kind)
	}
	return nil
}

// exchange sends mine and reads the peer's of the same kind.
func (p *bwPeer) exchange(kind string, mine, theirs any) error {
	if err := p.send(kind, mine); err != nil {
		return err
	}
	return p.recv(kind, theirs)
}

// watch returns a context that also ends, with the peer-gone error as its
// cause, when the peer's connection ends while this side runs without
// reading it (the peer died: over Soft-RoCE the writes to its destroyed
// QP neither complete nor fail, and the run would not end). stop ends the
// watch and returns that error, or nil; whatever the peer sent meanwhile
// stays buffered for the next recv.
func (p *bwPeer) watch(ctx context.Context) (context.Context, func() error) {
	wctx, cancel := context.WithCancelCause(ctx)
	var gone error
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A side that does not write sends its result at once: peek
		// past what came, until the connection ends or stop.
		for n := p.r.Buffered() + 1; n <= p.r.Size(); n = p.r.Buffered() + 1 {
			_, err := p.r.Peek(n)
			switch {
			case err == nil:
				continue
			case errors.Is(err, os.ErrDeadlineExceeded):
			case errors.Is(err, io.EOF):
				gone = fmt.Errorf("the %s closed the connection during the run", p.role)
			default:
				gone = fmt.Errorf("the connection to the %s failed during the run: %w", p.role, err)
			}
			if gone != nil {
				cancel(gone)
			}
			return
		}
	}()
	return wctx, func() error {
		p.conn.SetReadDeadline(time.Now()) // wakes the Peek
		<-done
		p.conn.SetReadDeadline(time.Time{})
		cancel(nil)
		return gone
	}
}
