package httpd

import (
	"bufio"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadRequest(t *testing.T) {
	type got struct {
		Method, Path, Query, Proto string
		Minor                      int
		Host                       string
		ContentLength              int64
		KeepAlive                  bool
	}
	tests := []struct {
		name, in string
		want     got
	}{
		{"prometheus", "GET /metrics HTTP/1.1\r\nHost: h:9315\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: text/plain\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
			got{"GET", "/metrics", "", "HTTP/1.1", 1, "h:9315", 0, true}},
		{"bare LF and a query", "HEAD /metrics?a=b HTTP/1.1\nHost: h\n\n",
			got{"HEAD", "/metrics", "a=b", "HTTP/1.1", 1, "h", 0, true}},
		{"absolute form", "GET http://h:9315/metrics?x HTTP/1.1\r\nHost: h:9315\r\n\r\n",
			got{"GET", "/metrics", "x", "HTTP/1.1", 1, "h:9315", 0, true}},
		{"absolute form, no path", "GET http://h:9315 HTTP/1.1\r\nHost: h\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.1", 1, "h", 0, true}},
		{"percent-encoded path", "GET /met%72ics HTTP/1.1\r\nHost: h\r\n\r\n",
			got{"GET", "/metrics", "", "HTTP/1.1", 1, "h", 0, true}},
		{"1.0 closes", "GET / HTTP/1.0\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.0", 0, "", 0, false}},
		{"1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.0", 0, "", 0, true}},
		{"1.1 close", "GET / HTTP/1.1\r\nHost: h\r\nConnection: te, close\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.1", 1, "h", 0, false}},
		{"later 1.x minor", "GET / HTTP/1.2\r\nHost: h\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.1", 1, "h", 0, true}},
		{"leading empty line", "\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.1", 1, "h", 0, true}},
		{"body length", "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nContent-Length: 12\r\n\r\n",
			got{"POST", "/x", "", "HTTP/1.1", 1, "h", 12, true}},
		{"chunked body", "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
			got{"POST", "/x", "", "HTTP/1.1", 1, "h", -1, true}},
		{"field value trimmed", "GET / HTTP/1.1\r\nHost: \t h \t\r\n\r\n",
			got{"GET", "/", "", "HTTP/1.1", 1, "h", 0, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := readRequest(bufio.NewReader(strings.NewReader(tt.in)), DefaultMaxHeaderBytes)
			if err != nil {
				t.Fatal(err)
			}
			g := got{r.Method, r.Path, r.Query, r.Proto, r.Minor, r.Header.Get("host"), r.ContentLength, r.keepAlive()}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("readRequest(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestReadRequestErrors(t *testing.T) {
	long := strings.Repeat("a", 5000)
	many := strings.Repeat("X-A: b\r\n", maxFields+1)
	tests := []struct {
		name, in string
		status   int // 0: the connection's error, no answer
	}{
		{"empty", "", 0},
		{"cut in the head", "GET / HTTP/1.1\r\nHost: h\r\n", StatusBadRequest},
		{"no version", "GET /\r\n\r\n", StatusBadRequest},
		{"version 2", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", StatusHTTPVersionNotSupported},
		{"junk version", "GET / HTTQ/1.1\r\nHost: h\r\n\r\n", StatusBadRequest},
		{"method not a token", "G(T / HTTP/1.1\r\nHost: h\r\n\r\n", StatusBadRequest},
		{"relative target", "GET metrics HTTP/1.1\r\nHost: h\r\n\r\n", StatusBadRequest},
		{"bad escape", "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n", StatusBadRequest},
		{"no Host", "GET / HTTP/1.1\r\n\r\n", StatusBadRequest},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", StatusBadRequest},
		{"space before colon", "GET / HTTP/1.1\r\nHost : h\r\n\r\n", StatusBadRequest},
		{"folded line", "GET / HTTP/1.1\r\nHost: h\r\nX-A: b\r\n c\r\n\r\n", StatusBadRequest},
		{"no colon", "GET / HTTP/1.1\r\nHost h\r\n\r\n", StatusBadRequest},
		{"control character", "GET / HTTP/1.1\r\nHost: h\x01\r\n\r\n", StatusBadRequest},
		{"length and chunked", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", StatusBadRequest},
		{"lengths differ", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", StatusBadRequest},
		{"signed length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +1\r\n\r\n", StatusBadRequest},
		{"1.0 chunked", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", StatusBadRequest},
		{"line over the buffer", "GET /" + long + " HTTP/1.1\r\nHost: h\r\n\r\n", StatusRequestHeaderFieldsTooLarge},
		{"too many fields", "GET / HTTP/1.1\r\nHost: h\r\n" + many + "\r\n", StatusRequestHeaderFieldsTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readRequest(bufio.NewReader(strings.NewReader(tt.in)), DefaultMaxHeaderBytes)
			if err == nil {
				t.Fatalf("readRequest(%q) took it", tt.in)
			}
			status := 0
			var se *statusError
			if errors.As(err, &se) {
				status = se.status
			}
			if status != tt.status {
				t.Errorf("readRequest(%q) = %v, want status %d", tt.in, err, tt.status)
			}
		})
	}
}

func TestReadRequestSizeLimit(t *testing.T) {
	in := "GET / HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("X-Field: 0123456789\r\n", 40) + "\r\n"
	if _, err := readRequest(bufio.NewReader(strings.NewReader(in)), len(in)); err != nil {
		t.Errorf("a head of exactly the limit: %v", err)
	}
	_, err := readRequest(bufio.NewReader(strings.NewReader(in)), len(in)-1)
	if se := (*statusError)(nil); !errors.As(err, &se) || se.status != StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a head one byte over the limit: %v, want 431", err)
	}
}

func TestHeader(t *testing.T) {
	var h Header
	h.Add("Accept", "a")
	h.Add("X-B", "1")
	h.Add("accept", "b")
	if diff := cmp.Diff([]string{"a", "b"}, h.Values("ACCEPT")); diff != "" {
		t.Errorf("Values (-want +got):\n%s", diff)
	}
	h.Set("Accept", "c")
	if got := h.Get("accept"); got != "c" {
		t.Errorf("Get after Set = %q", got)
	}
	h.Del("x-b")
	if diff := cmp.Diff([]field{{"Accept", "c"}}, h.fields, cmp.AllowUnexported(field{})); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

// FuzzReadRequest checks that no input panics the parser, and that what
// it takes is a request a handler can route.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{
		"GET /metrics HTTP/1.1\r\nHost: h\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
		"GET http://h/x?y HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc",
		"GET /%41 HTTP/1.1\nHost: h\n\n",
		"PRI * HTTP/2.0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := readRequest(bufio.NewReaderSize(strings.NewReader(string(in)), 4096), 8192)
		if err != nil {
			return
		}
		if !isToken(r.Method) || r.Path == "" || (r.Minor != 0 && r.Minor != 1) || r.ContentLength < -1 {
			t.Errorf("readRequest(%q) took %+v", in, r)
		}
	})
}
