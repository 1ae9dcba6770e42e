package httpd

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Handler answers one request.
type Handler func(w *Response, r *Request)

// ErrServerClosed is what Serve returns after Shutdown or Close.
var ErrServerClosed = errors.New("httpd: server closed")

// Defaults of the Server's limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
)

// Server serves HTTP/1.1 on the listeners given to Serve. Its fields are
// read when Serve starts.
type Server struct {
	// Handler answers the GET and HEAD requests; the server itself
	// answers the others with 405.
	Handler Handler
	// ReadHeaderTimeout is the longest a request head may take to come;
	// IdleTimeout the longest a kept-alive connection waits for the next
	// request. Zero is the default.
	ReadHeaderTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request head; zero is the default.
	MaxHeaderBytes int

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]bool // true while a request is being answered
	closed    bool
	idle      chan struct{} // closed when the last connection ends after Shutdown
}

func (s *Server) readHeaderTimeout() time.Duration {
	if s.ReadHeaderTimeout > 0 {
		return s.ReadHeaderTimeout
	}
	return DefaultReadHeaderTimeout
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return DefaultIdleTimeout
}

func (s *Server) maxHeaderBytes() int {
	if s.MaxHeaderBytes > 0 {
		return s.MaxHeaderBytes
	}
	return DefaultMaxHeaderBytes
}

// Serve accepts connections on ln and serves each in a goroutine until
// Shutdown or Close; it then returns ErrServerClosed, or else the error
// that ended accepting. It closes ln.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	if s.listeners == nil {
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[*conn]bool)
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			// Out of file descriptors and the like pass; back off
			// as they do.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) || isTemporary(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		c := &conn{srv: s, nc: nc}
		if !s.track(c) {
			nc.Close()
			return ErrServerClosed
		}
		go c.serve()
	}
}

// isTemporary reports an accept error that passes (EMFILE, ECONNABORTED).
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// track adds c, unless the server is closing.
func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = false
	return true
}

// setActive marks c as answering a request (or not); it reports false
// when the server is closing and c is to end instead.
func (s *Server) setActive(c *conn, active bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = active
	return true
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
	if s.closed && len(s.conns) == 0 && s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// Shutdown stops accepting, closes the connections that wait for a
// request, and waits until the others have answered theirs, or until ctx
// ends: it then closes them too and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c, active := range s.conns {
		if !active {
			c.nc.Close()
		}
	}
	var idle chan struct{}
	if len(s.conns) > 0 {
		if s.idle == nil {
			s.idle = make(chan struct{})
		}
		idle = s.idle
	}
	s.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		s.Close()
		return ctx.Err()
	}
}

// Close stops accepting and closes every connection at once.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for c := range s.conns {
		c.nc.Close()
	}
	return nil
}

// conn is one client connection.
type conn struct {
	srv *Server
	nc  net.Conn
	cr  connReader
}

// serve answers the requests of one connection until it closes.
func (c *conn) serve() {
	defer c.srv.forget(c)
	defer c.nc.Close()
	c.cr.nc = c.nc
	br := bufio.NewReaderSize(&c.cr, 4096)
	bw := bufio.NewWriterSize(c.nc, 4096)
	var buf []byte
	for first := true; ; first = false {
		wait := c.srv.idleTimeout()
		if first {
			wait = c.srv.readHeaderTimeout()
		}
		c.nc.SetReadDeadline(time.Now().Add(wait))
		if _, err := br.Peek(1); err != nil {
			return
		}
		if !c.srv.setActive(c, true) {
			return
		}
		c.nc.SetReadDeadline(time.Now().Add(c.srv.readHeaderTimeout()))
		req, err := readRequest(br, c.srv.maxHeaderBytes())
		c.nc.SetReadDeadline(time.Time{})
		if err != nil {
			var se *statusError
			if errors.As(err, &se) {
				w := &Response{w: bw, minor: 1, close: true, buf: make([]byte, 0, 512)}
				Error(w, StatusText(se.status)+": "+se.msg, se.status)
				w.finish()
			}
			return
		}
		if buf == nil {
			buf = make([]byte, 0, bufferSize)
		}
		w := &Response{w: bw, buf: buf[:0], head: req.Method == "HEAD", minor: req.Minor}
		w.close = !req.keepAlive() || req.hasBody()
		ctx, cancel := context.WithCancel(context.Background())
		req.ctx = ctx
		if !req.hasBody() && br.Buffered() == 0 {
			c.cr.startBackgroundRead(cancel)
		}
		switch req.Method {
		case "GET", "HEAD":
			c.srv.Handler(w, req)
		default:
			w.Header.Set("Allow", "GET, HEAD")
			Error(w, "405 method not allowed", StatusMethodNotAllowed)
		}
		if !w.sent && c.srv.isClosed() {
			w.close = true // say so: the connection ends with this answer
		}
		err = w.finish()
		c.cr.abortPendingRead()
		cancel()
		if err != nil || w.close || c.cr.err != nil {
			return
		}
		if !c.srv.setActive(c, false) {
			return
		}
	}
}

// connReader reads the connection for the request heads, and between
// them, while a handler runs, waits in the background for one byte: an
// error there (the client closed) ends the request's context, and a byte
// (a pipelined request) is kept for the next head.
type connReader struct {
	nc      net.Conn
	mu      sync.Mutex
	pending []byte // read in the background, not yet handed out
	busy    bool   // a background read runs
	done    chan struct{}
	err     error // the background read's, when it was not aborted
	one     [1]byte
}

func (cr *connReader) Read(p []byte) (int, error) {
	cr.mu.Lock()
	if cr.busy {
		cr.mu.Unlock()
		panic("httpd: read while a background read runs")
	}
	if len(cr.pending) > 0 {
		n := copy(p, cr.pending)
		cr.pending = cr.pending[n:]
		cr.mu.Unlock()
		return n, nil
	}
	if cr.err != nil {
		err := cr.err
		cr.mu.Unlock()
		return 0, err
	}
	cr.mu.Unlock()
	return cr.nc.Read(p)
}

// startBackgroundRead starts the wait for a byte, unless one is already
// pending (a request the client sent early).
func (cr *connReader) startBackgroundRead(cancel context.CancelFunc) {
	cr.mu.Lock()
	if len(cr.pending) > 0 || cr.err != nil {
		cr.mu.Unlock()
		return
	}
	cr.busy = true
	cr.done = make(chan struct{})
	cr.mu.Unlock()
	go func() {
		n, err := cr.nc.Read(cr.one[:])
		cr.mu.Lock()
		if n == 1 {
			cr.pending = cr.one[:1]
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			cr.err = err
			cancel()
		}
		cr.busy = false
		close(cr.done)
		cr.mu.Unlock()
	}()
}

// abortPendingRead ends a background read and waits for it.
func (cr *connReader) abortPendingRead() {
	cr.mu.Lock()
	if !cr.busy {
		cr.mu.Unlock()
		return
	}
	done := cr.done
	cr.mu.Unlock()
	cr.nc.SetReadDeadline(time.Unix(1, 0))
	<-done
	cr.nc.SetReadDeadline(time.Time{})
}
