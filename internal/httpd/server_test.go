package httpd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// start serves h on a loopback port and returns its address; the server
// is closed when the test ends.
func start(t *testing.T, s *Server) (string, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String(), done
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// body answers with n bytes of a pattern.
func body(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

func sizedHandler(w *Response, r *Request) {
	n := map[string]int{"/small": 5, "/large": 3*bufferSize + 17, "/empty": 0}[r.Path]
	if r.Path == "/missing" {
		Error(w, "404 page not found", StatusNotFound)
		return
	}
	w.Header.Set("Content-Type", "text/plain")
	w.Write(body(n))
}

// exchange is one answer as a client reads it.
type exchange struct {
	Status           int
	ContentLength    int64
	TransferEncoding []string
	Close            bool
	Body             int // length
	Allow            string
}

func read(t *testing.T, br *bufio.Reader, method string) exchange {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if method != "HEAD" && !bytes.Equal(b, body(len(b))) && resp.StatusCode == 200 {
		t.Errorf("body of %d bytes is not the handler's", len(b))
	}
	if resp.Header.Get("Date") == "" {
		t.Errorf("no Date field")
	}
	return exchange{resp.StatusCode, resp.ContentLength, resp.TransferEncoding, resp.Close, len(b), resp.Header.Get("Allow")}
}

func TestServeAnswers(t *testing.T) {
	addr, _ := start(t, &Server{Handler: sizedHandler})
	large := 3*bufferSize + 17
	tests := []struct {
		name, req, method string
		want              exchange
	}{
		{"small", "GET /small HTTP/1.1\r\nHost: h\r\n\r\n", "GET", exchange{200, 5, nil, false, 5, ""}},
		{"empty", "GET /empty HTTP/1.1\r\nHost: h\r\n\r\n", "GET", exchange{200, 0, nil, false, 0, ""}},
		{"large is chunked", "GET /large HTTP/1.1\r\nHost: h\r\n\r\n", "GET", exchange{200, -1, []string{"chunked"}, false, large, ""}},
		{"head small", "HEAD /small HTTP/1.1\r\nHost: h\r\n\r\n", "HEAD", exchange{200, 5, nil, false, 0, ""}},
		{"head large", "HEAD /large HTTP/1.1\r\nHost: h\r\n\r\n", "HEAD", exchange{200, -1, []string{"chunked"}, false, 0, ""}},
		{"not found", "GET /missing HTTP/1.1\r\nHost: h\r\n\r\n", "GET", exchange{404, 19, nil, false, 19, ""}},
		{"1.0 keep-alive small", "GET /small HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "GET", exchange{200, 5, nil, false, 5, ""}},
	}
	// One connection for them all: each answer must leave it ready for
	// the next request.
	c := dial(t, addr)
	br := bufio.NewReader(c)
	for _, tt := range tests {
		if _, err := io.WriteString(c, tt.req); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, read(t, br, tt.method)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestServeCloses(t *testing.T) {
	addr, _ := start(t, &Server{Handler: sizedHandler})
	large := 3*bufferSize + 17
	tests := []struct {
		name, req, method string
		want              exchange
	}{
		{"1.0 large until close", "GET /large HTTP/1.0\r\n\r\n", "GET", exchange{200, -1, nil, true, large, ""}},
		{"1.0 small", "GET /small HTTP/1.0\r\n\r\n", "GET", exchange{200, 5, nil, true, 5, ""}},
		{"client's close", "GET /small HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", "GET", exchange{200, 5, nil, true, 5, ""}},
		{"POST", "POST /small HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc", "POST", exchange{405, 23, nil, true, 23, "GET, HEAD"}},
		{"GET with a body", "GET /small HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc", "GET", exchange{200, 5, nil, true, 5, ""}},
		{"bad request", "GET /small HTTP/1.1\r\n\r\n", "GET", exchange{400, 54, nil, true, 54, ""}},
		{"version 2", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "GET", exchange{505, 45, nil, true, 45, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := io.WriteString(c, tt.req); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			if diff := cmp.Diff(tt.want, read(t, br, tt.method)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("after the answer: %d bytes, %v; want the connection closed", n, err)
			}
		})
	}
}

func TestServePipelined(t *testing.T) {
	addr, _ := start(t, &Server{Handler: sizedHandler})
	c := dial(t, addr)
	io.WriteString(c, "GET /large HTTP/1.1\r\nHost: h\r\n\r\nGET /small HTTP/1.1\r\nHost: h\r\n\r\nHEAD /small HTTP/1.1\r\nHost: h\r\n\r\n")
	br := bufio.NewReader(c)
	var got []int
	for _, m := range []string{"GET", "GET", "HEAD"} {
		got = append(got, read(t, br, m).Body)
	}
	if diff := cmp.Diff([]int{3*bufferSize + 17, 5, 0}, got); diff != "" {
		t.Errorf("bodies (-want +got):\n%s", diff)
	}
}

func TestServeWithNetHTTPClient(t *testing.T) {
	addr, _ := start(t, &Server{Handler: sizedHandler})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, p := range []string{"/large", "/small", "/large"} {
		resp, err := client.Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, body(len(b))) || len(b) < 5 {
			t.Errorf("GET %s: %s, %d bytes, %v", p, resp.Status, len(b), err)
		}
	}
}

// TestServeClientGone checks that a handler's context ends when the
// client closes the connection while it waits.
func TestServeClientGone(t *testing.T) {
	ended := make(chan error, 1)
	addr, _ := start(t, &Server{Handler: func(w *Response, r *Request) {
		select {
		case <-r.Context().Done():
			ended <- r.Context().Err()
		case <-time.After(10 * time.Second):
			ended <- errors.New("the context did not end in 10 s")
		}
	}})
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	c.Close()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("handler's context: %v, want canceled", err)
	}
}

func TestShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	s := &Server{Handler: func(w *Response, r *Request) {
		close(entered)
		<-release
		w.WriteString("done")
	}}
	addr, served := start(t, s)
	idle := dial(t, addr) // connected, no request: closed by Shutdown
	busy := dial(t, addr)
	io.WriteString(busy, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	if n, err := idle.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("idle connection read %d bytes, %v; want it closed", n, err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a request was being answered", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "done" || !resp.Close {
		t.Errorf("answer during shutdown: %q, close %v; want \"done\" and the connection closed", b, resp.Close)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != ErrServerClosed {
		t.Errorf("Serve: %v, want ErrServerClosed", err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Errorf("the listener still accepts after Shutdown")
	}
}

func TestShutdownDeadline(t *testing.T) {
	ended := make(chan error, 1)
	s := &Server{Handler: func(w *Response, r *Request) {
		<-r.Context().Done()
		ended <- r.Context().Err()
	}}
	addr, _ := start(t, s)
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: h\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the deadline", err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end when Shutdown closed its connection")
	}
}

func TestReadHeaderTimeout(t *testing.T) {
	addr, _ := start(t, &Server{Handler: sizedHandler, ReadHeaderTimeout: 100 * time.Millisecond, IdleTimeout: 100 * time.Millisecond})
	for _, sent := range []string{"", "GET /small HTTP/1.1\r\nHo", "GET /small HTTP/1.1\r\nHost: h\r\n\r\n"} {
		c := dial(t, addr)
		io.WriteString(c, sent)
		t0 := time.Now()
		got, err := io.ReadAll(c)
		if err != nil {
			t.Errorf("after %q: %v", sent, err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Errorf("after %q the connection stayed open %v", sent, d)
		}
		if want := strings.HasSuffix(sent, "\r\n\r\n"); want != bytes.Contains(got, []byte("200 OK")) {
			t.Errorf("after %q the server sent %q", sent, got)
		}
	}
}
