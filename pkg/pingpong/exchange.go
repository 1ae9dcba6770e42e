package pingpong

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// done is the client's last message: rdma-core writes the C string
// "done" with its NUL once it has read the server's address.
var done = []byte("done\x00")

// DefaultPort is the pingpongs' TCP port (-p).
const DefaultPort = 18515

// Conn is one side of the exchange over a TCP connection.
type Conn struct {
	c net.Conn
}

// NewConn wraps an established connection (a test's net.Pipe, or what
// Dial and Listener.Accept return).
func NewConn(c net.Conn) *Conn { return &Conn{c: c} }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Send writes d's wire message.
func (c *Conn) Send(d Dest) error {
	if _, err := c.c.Write(d.Wire()); err != nil {
		return fmt.Errorf("couldn't send local address: %w", err)
	}
	return nil
}

// Recv reads one wire message and parses it.
func (c *Conn) Recv() (Dest, error) {
	msg := make([]byte, WireSize)
	if n, err := io.ReadFull(c.c, msg); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return Dest{}, fmt.Errorf("couldn't read remote address: the peer sent %d of %d bytes and closed the connection", n, WireSize)
		}
		return Dest{}, fmt.Errorf("couldn't read remote address: %w", err)
	}
	return ParseWire(msg)
}

// SendDone writes the client's "done".
func (c *Conn) SendDone() error {
	if _, err := c.c.Write(done); err != nil {
		return fmt.Errorf("couldn't write done: %w", err)
	}
	return nil
}

// RecvDone reads the client's "done".
func (c *Conn) RecvDone() error {
	msg := make([]byte, len(done))
	if _, err := io.ReadFull(c.c, msg); err != nil {
		return fmt.Errorf("couldn't read done: %w", err)
	}
	if !bytes.Equal(msg, done) {
		return fmt.Errorf("the peer sent %q, want \"done\"", msg)
	}
	return nil
}

// Client is the client's side of one exchange of n addresses (one per
// QP: ibv_srq_pingpong has several): send all of mine, read as many of
// the server's, send "done".
func (c *Conn) Client(mine []Dest) ([]Dest, error) {
	for _, d := range mine {
		if err := c.Send(d); err != nil {
			return nil, err
		}
	}
	rem := make([]Dest, len(mine))
	for i := range rem {
		d, err := c.Recv()
		if err != nil {
			return nil, err
		}
		rem[i] = d
	}
	return rem, c.SendDone()
}

// Server is the server's side: read the client's addresses, connect to
// them (before answering, as rdma-core does, so that the server's QPs are
// ready to receive when the client starts), send mine, read "done".
func (c *Conn) Server(mine []Dest, connect func(rem []Dest) error) ([]Dest, error) {
	rem := make([]Dest, len(mine))
	for i := range rem {
		d, err := c.Recv()
		if err != nil {
			return nil, err
		}
		rem[i] = d
	}
	if err := connect(rem); err != nil {
		return nil, err
	}
	for _, d := range mine {
		if err := c.Send(d); err != nil {
			return nil, err
		}
	}
	return rem, c.RecvDone()
}

// Dial connects to a server's exchange, trying each address the name
// resolves to, as rdma-core does.
func Dial(ctx context.Context, host string, port int) (*Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("couldn't connect to %s:%d: %w", host, port, err)
	}
	return NewConn(c), nil
}

// Accept listens on port (every address), takes one connection and
// stops listening, as rdma-core's server does; a context that ends
// stops the wait.
func Accept(ctx context.Context, port int) (*Conn, error) {
	l, err := Listen(ctx, port)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Accept()
}

// Listener is a server's listening socket, for a server of several
// clients (ibv_xsrq_pingpong -c).
type Listener struct {
	ctx  context.Context
	l    net.Listener
	stop func() bool
}

// Listen listens on port on every address; a context that ends closes
// the listener, which ends a wait in Accept.
func Listen(ctx context.Context, port int) (*Listener, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, fmt.Errorf("couldn't listen to port %d: %w", port, err)
	}
	return &Listener{ctx: ctx, l: l, stop: context.AfterFunc(ctx, func() { l.Close() })}, nil
}

// Accept waits for the next client.
func (l *Listener) Accept() (*Conn, error) {
	c, err := l.l.Accept()
	if err != nil {
		if l.ctx.Err() != nil {
			return nil, l.ctx.Err()
		}
		return nil, fmt.Errorf("accept() failed: %w", err)
	}
	return NewConn(c), nil
}

// Close stops listening.
func (l *Listener) Close() error {
	l.stop()
	return l.l.Close()
}
