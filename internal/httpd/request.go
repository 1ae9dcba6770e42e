package httpd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Header is a message's header fields in the order they came or were set.
type Header struct {
	fields []field
}

type field struct{ name, value string }

// Get returns the value of the first field named name, compared without
// regard to case, or "" when there is none.
func (h *Header) Get(name string) string {
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			return f.value
		}
	}
	return ""
}

// Values returns the values of every field named name, compared without
// regard to case.
func (h *Header) Values(name string) []string {
	var vs []string
	for _, f := range h.fields {
		if strings.EqualFold(f.name, name) {
			vs = append(vs, f.value)
		}
	}
	return vs
}

// Set replaces the fields named name with one of value.
func (h *Header) Set(name, value string) {
	h.Del(name)
	h.Add(name, value)
}

// Add appends a field.
func (h *Header) Add(name, value string) {
	h.fields = append(h.fields, field{name, value})
}

// Del removes the fields named name.
func (h *Header) Del(name string) {
	h.fields = slices.DeleteFunc(h.fields, func(f field) bool { return strings.EqualFold(f.name, name) })
}

// Request is a request's head: the request line and the header fields.
type Request struct {
	// Method is the request method, such as "GET".
	Method string
	// Target is the request target as sent: "/metrics?x=1", or an
	// absolute URI.
	Target string
	// Path is the target's path, percent-decoded; Query is its raw query.
	Path, Query string
	// Proto is the protocol version, "HTTP/1.1" or "HTTP/1.0";
	// Minor is its minor number.
	Proto string
	Minor int
	// Header holds the header fields.
	Header Header
	// ContentLength is the body's length from Content-Length, or -1 when
	// the body is chunked; 0 when there is no body.
	ContentLength int64

	ctx context.Context
}

// Context is the request's context: it ends when the client closes the
// connection, when the server closes it, or when the handler returns.
func (r *Request) Context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// hasBody reports whether a body follows the head.
func (r *Request) hasBody() bool { return r.ContentLength != 0 }

// keepAlive reports whether the client lets the connection serve another
// request after this one.
func (r *Request) keepAlive() bool {
	if hasToken(r.Header.Values("Connection"), "close") {
		return false
	}
	if r.Minor == 0 {
		return hasToken(r.Header.Values("Connection"), "keep-alive")
	}
	return true
}

// hasToken reports whether a comma-separated list field holds token.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// statusError is a request that is answered with a status and closed.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, StatusText(e.status), e.msg)
}

func badRequest(format string, args ...any) error {
	return &statusError{StatusBadRequest, fmt.Sprintf(format, args...)}
}

// errTooLarge is a head over the size or field limit.
var errTooLarge = &statusError{StatusRequestHeaderFieldsTooLarge, "request head too large"}

// maxFields is the most header fields a request may have.
const maxFields = 100

// readRequest reads a request head of at most maxBytes bytes (the
// request line and the fields with their line ends). A line longer than
// r's buffer is also too large. An error that is not a *statusError is
// the connection's.
func readRequest(r *bufio.Reader, maxBytes int) (*Request, error) {
	budget := maxBytes
	line := func() ([]byte, error) {
		l, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errTooLarge
		}
		if err != nil {
			return nil, err
		}
		if budget -= len(l); budget < 0 {
			return nil, errTooLarge
		}
		l = l[:len(l)-1]
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		return l, nil
	}
	l, err := line()
	// RFC 9112 2.2: a server ought to ignore empty lines before the
	// request line.
	for i := 0; err == nil && len(l) == 0 && i < 4; i++ {
		l, err = line()
	}
	if err != nil {
		return nil, err
	}
	req, err := parseRequestLine(string(l))
	if err != nil {
		return nil, err
	}
	for {
		l, err := line()
		if err != nil {
			if _, ok := err.(*statusError); ok {
				return nil, err
			}
			return nil, badRequest("request head cut short: %v", err)
		}
		if len(l) == 0 {
			break
		}
		if len(req.Header.fields) == maxFields {
			return nil, errTooLarge
		}
		name, value, err := parseField(l)
		if err != nil {
			return nil, err
		}
		req.Header.Add(name, value)
	}
	if err := req.framing(); err != nil {
		return nil, err
	}
	return req, nil
}

// parseRequestLine reads "METHOD TARGET HTTP/1.x".
func parseRequestLine(s string) (*Request, error) {
	method, rest, ok1 := strings.Cut(s, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || target == "" {
		return nil, badRequest("malformed request line %q", s)
	}
	if !isToken(method) {
		return nil, badRequest("malformed method %q", method)
	}
	req := &Request{Method: method, Target: target, Proto: proto}
	switch proto {
	case "HTTP/1.1":
		req.Minor = 1
	case "HTTP/1.0":
	default:
		if strings.HasPrefix(proto, "HTTP/") && len(proto) == 8 && proto[6] == '.' && proto[5] >= '0' && proto[5] <= '9' && proto[7] >= '0' && proto[7] <= '9' {
			if proto[5] == '1' {
				// A later HTTP/1 minor version is served as 1.1 (RFC 9110 2.5).
				req.Proto, req.Minor = "HTTP/1.1", 1
				break
			}
			return nil, &statusError{StatusHTTPVersionNotSupported, fmt.Sprintf("version %s", proto)}
		}
		return nil, badRequest("malformed protocol %q", proto)
	}
	if err := req.parseTarget(); err != nil {
		return nil, err
	}
	return req, nil
}

// parseTarget sets Path and Query from the origin form ("/p?q"), the
// absolute form ("http://host/p?q") or the asterisk form.
func (r *Request) parseTarget() error {
	t := r.Target
	if t == "*" {
		r.Path = "*"
		return nil
	}
	if !strings.HasPrefix(t, "/") {
		i := strings.Index(t, "://")
		if i <= 0 {
			return badRequest("malformed request target %q", t)
		}
		rest := t[i+3:]
		j := strings.IndexAny(rest, "/?")
		if j < 0 {
			t = "/"
		} else {
			t = rest[j:]
			if t[0] == '?' {
				t = "/" + t
			}
		}
	}
	p, q, _ := strings.Cut(t, "?")
	r.Query = q
	if strings.IndexByte(p, '%') < 0 {
		r.Path = p
	} else {
		dp, err := url.PathUnescape(p)
		if err != nil {
			return badRequest("malformed request target %q", r.Target)
		}
		r.Path = dp
	}
	for i := 0; i < len(r.Target); i++ {
		if c := r.Target[i]; c <= ' ' || c == 0x7f {
			return badRequest("control character in request target %q", r.Target)
		}
	}
	return nil
}

// parseField reads "Name: value"; space before the colon, and obsolete
// line folding, are refused (RFC 9112 5.1, 5.2).
func parseField(l []byte) (string, string, error) {
	if l[0] == ' ' || l[0] == '\t' {
		return "", "", badRequest("obsolete line folding in the header")
	}
	i := bytes.IndexByte(l, ':')
	if i <= 0 || !isToken(string(l[:i])) {
		return "", "", badRequest("malformed header line %q", l)
	}
	v := bytes.Trim(l[i+1:], " \t")
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return "", "", badRequest("control character in header field %s", l[:i])
		}
	}
	return string(l[:i]), string(v), nil
}

// framing sets ContentLength from Content-Length and Transfer-Encoding
// and checks what RFC 9112 6.3 asks of them.
func (r *Request) framing() error {
	te := r.Header.Values("Transfer-Encoding")
	cl := r.Header.Values("Content-Length")
	if r.Minor == 1 && len(r.Header.Values("Host")) != 1 {
		return badRequest("an HTTP/1.1 request needs one Host field")
	}
	if len(te) > 0 {
		if len(cl) > 0 {
			return badRequest("both Transfer-Encoding and Content-Length")
		}
		if r.Minor == 0 {
			return badRequest("Transfer-Encoding in an HTTP/1.0 request")
		}
		r.ContentLength = -1
		return nil
	}
	if len(cl) == 0 {
		return nil
	}
	for _, v := range cl[1:] {
		if v != cl[0] {
			return badRequest("Content-Length fields differ")
		}
	}
	n, err := strconv.ParseUint(cl[0], 10, 63)
	if err != nil || cl[0][0] == '+' {
		return badRequest("malformed Content-Length %q", cl[0])
	}
	r.ContentLength = int64(n)
	return nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
