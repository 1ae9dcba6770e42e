package httpd

import (
	"bufio"
	"errors"
	"strconv"
	"time"
)

// Status codes this package and its handlers answer with.
const (
	StatusOK                          = 200
	StatusBadRequest                  = 400
	StatusNotFound                    = 404
	StatusMethodNotAllowed            = 405
	StatusRequestHeaderFieldsTooLarge = 431
	StatusInternalServerError         = 500
	StatusServiceUnavailable          = 503
	StatusHTTPVersionNotSupported     = 505
)

// StatusText is the reason phrase of a status code, "" for one this
// package does not know.
func StatusText(code int) string {
	switch code {
	case StatusOK:
		return "OK"
	case StatusBadRequest:
		return "Bad Request"
	case StatusNotFound:
		return "Not Found"
	case StatusMethodNotAllowed:
		return "Method Not Allowed"
	case StatusRequestHeaderFieldsTooLarge:
		return "Request Header Fields Too Large"
	case StatusInternalServerError:
		return "Internal Server Error"
	case StatusServiceUnavailable:
		return "Service Unavailable"
	case StatusHTTPVersionNotSupported:
		return "HTTP Version Not Supported"
	}
	return ""
}

// bufferSize is how much of an answer is held before the head goes out:
// an answer that fits is sent with its Content-Length, a longer one in
// chunks of this size (HTTP/1.1) or until the connection closes (1.0).
const bufferSize = 32 << 10

// ErrBodyNotAllowed is what Write returns for an answer that has no body
// (a 204 or 304 status).
var ErrBodyNotAllowed = errors.New("httpd: this status has no body")

// Response writes the answer to one request. Its header can change until
// the first Write past the buffer, WriteHeader's status until then too.
type Response struct {
	// Header is the header fields sent with the answer; Date,
	// Content-Length, Transfer-Encoding and Connection are this
	// package's.
	Header Header

	w       *bufio.Writer
	status  int
	buf     []byte
	head    bool // the request was HEAD: the body is counted, not sent
	minor   int  // the request's HTTP/1 minor version
	close   bool // the connection closes after this answer
	sent    bool // the head went out
	chunked bool
	err     error
}

// WriteHeader sets the status code; without it the status is 200. The
// first call wins.
func (w *Response) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

// Write adds p to the body. Its error is the connection's, once the
// client has gone away.
func (w *Response) Write(p []byte) (int, error) {
	w.WriteHeader(StatusOK)
	if w.err != nil {
		return 0, w.err
	}
	if !bodyAllowed(w.status) {
		return 0, ErrBodyNotAllowed
	}
	n := len(p)
	for len(p) > 0 {
		if len(w.buf) == cap(w.buf) {
			w.flushBuf()
			if w.err != nil {
				return n - len(p), w.err
			}
		}
		c := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+c]
		p = p[c:]
	}
	return n, nil
}

// WriteString adds s to the body.
func (w *Response) WriteString(s string) (int, error) {
	return w.Write([]byte(s))
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// flushBuf sends the head if it has not gone out, then the buffered body
// as one chunk.
func (w *Response) flushBuf() {
	if !w.sent {
		if w.minor >= 1 {
			w.chunked = true
		} else {
			w.close = true
		}
		w.writeHead(-1)
	}
	if len(w.buf) > 0 && !w.head && w.err == nil {
		if w.chunked {
			w.w.WriteString(strconv.FormatInt(int64(len(w.buf)), 16))
			w.w.WriteString("\r\n")
			w.w.Write(w.buf)
			_, w.err = w.w.WriteString("\r\n")
		} else {
			_, w.err = w.w.Write(w.buf)
		}
	}
	w.buf = w.buf[:0]
}

// writeHead writes the status line and the fields, with Content-Length
// when length is not -1.
func (w *Response) writeHead(length int) {
	w.sent = true
	w.w.WriteString("HTTP/1.1 ")
	w.w.WriteString(strconv.Itoa(w.status))
	w.w.WriteByte(' ')
	w.w.WriteString(StatusText(w.status))
	w.w.WriteString("\r\n")
	for _, f := range []string{"Date", "Content-Length", "Transfer-Encoding", "Connection"} {
		w.Header.Del(f)
	}
	w.Header.Add("Date", time.Now().UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	switch {
	case length >= 0 && bodyAllowed(w.status):
		w.Header.Add("Content-Length", strconv.Itoa(length))
	case w.chunked:
		w.Header.Add("Transfer-Encoding", "chunked")
	}
	if w.close {
		w.Header.Add("Connection", "close")
	} else if w.minor == 0 {
		w.Header.Add("Connection", "keep-alive")
	}
	for _, f := range w.Header.fields {
		w.w.WriteString(f.name)
		w.w.WriteString(": ")
		w.w.WriteString(f.value)
		w.w.WriteString("\r\n")
	}
	_, w.err = w.w.WriteString("\r\n")
}

// finish sends what is left of the answer and flushes the connection's
// writer.
func (w *Response) finish() error {
	w.WriteHeader(StatusOK)
	if !w.sent {
		w.writeHead(len(w.buf))
		if !w.head && w.err == nil && bodyAllowed(w.status) {
			_, w.err = w.w.Write(w.buf)
		}
	} else {
		w.flushBuf()
		if w.chunked && !w.head && w.err == nil {
			_, w.err = w.w.WriteString("0\r\n\r\n")
		}
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// Error answers with status and msg as a plain-text body.
func Error(w *Response, msg string, status int) {
	w.Header.Set("Content-Type", "text/plain; charset=utf-8")
	w.Header.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.WriteString(msg + "\n")
}
