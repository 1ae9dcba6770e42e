package rdma

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ibtool/ibtool/pkg/rdmacmutils"
	"github.com/ibtool/ibtool/pkg/verbs"
)

// rpingInfo is rping's one message (struct rping_rdma_info), whose wire
// form pkg/rdmacmutils keeps.
type rpingInfo = rdmacmutils.RpingInfo

const rpingInfoSize = rdmacmutils.RpingInfoSize

// parseRpingInfo decodes a received message, which must be 16 bytes; any
// other size is rping's "Received bogus data".
func parseRpingInfo(b []byte) (rpingInfo, error) {
	var m rpingInfo
	if err := m.UnmarshalBinary(b); err != nil {
		return rpingInfo{}, fmt.Errorf("Received bogus data, size %d", len(b))
	}
	return m, nil
}

// rpingBuf names a local buffer a message advertises.
type rpingBuf int

const (
	rpingGoAhead rpingBuf = iota // no buffer: the server's go-ahead
	rpingStart                   // the client's source buffer, which the server reads
	rpingSink                    // the rdma buffer: the client's sink, the server's copy
)

// rpingLink is one connection's data path as the ping loops drive it:
// the verbs one (rpingVerbs) or a fake in the tests.
type rpingLink interface {
	// send posts a SEND of the message advertising buf.
	send(buf rpingBuf) error
	// recv waits for the next message from the peer (and posts the next
	// receive).
	recv(ctx context.Context) (rpingInfo, error)
	// read RDMA READs the peer's buffer into this side's rdma buffer and
	// waits until it is there.
	read(ctx context.Context, from rpingInfo) error
	// write RDMA WRITEs the first n bytes of the rdma buffer to the
	// peer's buffer and waits until it went.
	write(ctx context.Context, to rpingInfo, n int) error
	// start and rdma are the local buffers' bytes (start: client only).
	start() []byte
	rdma() []byte
}

// errRpingDisconnected is the cause a connection's context ends with
// when the CM reports RDMA_CM_EVENT_DISCONNECTED.
var errRpingDisconnected = errors.New("the peer disconnected")

// rpingFill writes ping number ping into buf as rping does: the format
// "rdma-ping-%d: ", then letters from 'A' + the ping's offset through
// 'z' over and over, and a NUL last.
func rpingFill(buf []byte, ping int) {
	n := copy(buf, fmt.Sprintf("rdma-ping-%d: ", ping))
	c := byte(65 + ping%58)
	for i := n; i < len(buf); i++ {
		buf[i] = c
		if c++; c > 122 {
			c = 65
		}
	}
	buf[len(buf)-1] = 0
}

// cString is the bytes of b up to its first NUL.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// rpingClient runs count pings (forever for 0) over l, printing each
// one's data with verbose and checking it with validate.
func rpingClient(ctx context.Context, l rpingLink, count int, verbose, validate bool, out io.Writer) error {
	for ping := 0; count == 0 || ping < count; ping++ {
		rpingFill(l.start(), ping)
		if err := l.send(rpingStart); err != nil {
			return fmt.Errorf("ping %d: %w", ping, err)
		}
		// The server read the source buffer.
		if _, err := l.recv(ctx); err != nil {
			return rpingPeerErr(ctx, "ping %d: waiting for the server to read the data: %w", ping, err)
		}
		if err := l.send(rpingSink); err != nil {
			return fmt.Errorf("ping %d: %w", ping, err)
		}
		// The server wrote the data back.
		if _, err := l.recv(ctx); err != nil {
			return rpingPeerErr(ctx, "ping %d: waiting for the server to write the data back: %w", ping, err)
		}
		if validate && !bytes.Equal(l.start(), l.rdma()) {
			return fmt.Errorf("ping %d: data mismatch!", ping)
		}
		if verbose {
			fmt.Fprintf(out, "ping data: %s\n", cString(l.rdma()))
		}
	}
	return nil
}

// rpingServer answers pings over l until the client disconnects between
// two pings; a client gone in the middle of one is an error.
func rpingServer(ctx context.Context, l rpingLink, verbose bool, out io.Writer) error {
	for ping := 0; ; ping++ {
		src, err := l.recv(ctx)
		if err != nil {
			if rpingPeerGone(ctx, err) {
				return nil
			}
			return fmt.Errorf("ping %d: waiting for the client's source buffer: %w", ping, rpingWhy(ctx, err))
		}
		if int(src.Size) > len(l.rdma()) {
			return fmt.Errorf("ping %d: the client's %d bytes do not fit in this side's %d (-S)", ping, src.Size, len(l.rdma()))
		}
		if err := l.read(ctx, src); err != nil {
			return rpingPeerErr(ctx, "ping %d: RDMA READ of the client's data: %w", ping, err)
		}
		if verbose {
			fmt.Fprintf(out, "server ping data: %s\n", cString(l.rdma()))
		}
		if err := l.send(rpingGoAhead); err != nil {
			return fmt.Errorf("ping %d: %w", ping, err)
		}
		sink, err := l.recv(ctx)
		if err != nil {
			return rpingPeerErr(ctx, "ping %d: waiting for the client's sink buffer: %w", ping, err)
		}
		n := min(len(cString(l.rdma()))+1, len(l.rdma()))
		if n > int(sink.Size) {
			return fmt.Errorf("ping %d: %d bytes do not fit in the client's sink of %d", ping, n, sink.Size)
		}
		if err := l.write(ctx, sink, n); err != nil {
			return rpingPeerErr(ctx, "ping %d: RDMA WRITE of the data back: %w", ping, err)
		}
		if err := l.send(rpingGoAhead); err != nil {
			return fmt.Errorf("ping %d: %w", ping, err)
		}
	}
}

// rpingPeerErr wraps err, saying so when the peer disconnected or the
// port went down.
func rpingPeerErr(ctx context.Context, format string, ping int, err error) error {
	if rpingPeerGone(ctx, err) {
		err = errRpingDisconnected
	} else {
		err = rpingWhy(ctx, err)
	}
	return fmt.Errorf(format, ping, err)
}

// rpingWhy is err, or what it comes from: the port gone down
// (cmPortGone; a failed request is said after it), or why ctx ended
// (rpingCause).
func rpingWhy(ctx context.Context, err error) error {
	pd := cmPortGone(ctx, err)
	if pd == nil {
		return rpingCause(ctx, err)
	}
	var ce *verbs.CompletionError
	if errors.As(err, &ce) {
		return fmt.Errorf("%w; %v", pd, err) // the failed request too
	}
	return pd
}

// rpingCause is why ctx ended (the port gone down, say) when err is only
// that it ended; otherwise err.
func rpingCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return cause
	}
	return err
}

// rpingPeerGone reports whether the peer disconnected: the CM said so,
// or err is a flushed work request and the CM says so within
// cmFlushWait (Soft-iWARP flushes the QP as the peer's TCP connection
// ends, before the CM's DISCONNECTED event arrives).
func rpingPeerGone(ctx context.Context, err error) bool {
	if errors.Is(context.Cause(ctx), errRpingDisconnected) {
		return true
	}
	var ce *verbs.CompletionError
	if !errors.As(err, &ce) || ce.WC.Status != verbs.WCWRFlushErr {
		return false
	}
	return errors.Is(cmCauseWithin(ctx), errRpingDisconnected)
}
