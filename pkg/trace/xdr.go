package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errShort is what an XDR decoder returns when the data ends first.
var errShort = errors.New("cut short")

// xdrReader reads XDR (RFC 4506) items from a byte slice. The first error
// sticks: every later read returns zero, so decoders check once at the end.
type xdrReader struct {
	b   []byte
	off int
	err error
}

func (x *xdrReader) fail(format string, a ...any) {
	if x.err == nil {
		x.err = fmt.Errorf("offset %d: "+format, append([]any{x.off}, a...)...)
	}
}

func (x *xdrReader) u32() uint32 {
	if x.err != nil {
		return 0
	}
	if len(x.b)-x.off < 4 {
		x.fail("%w", errShort)
		return 0
	}
	v := binary.BigEndian.Uint32(x.b[x.off:])
	x.off += 4
	return v
}

func (x *xdrReader) u64() uint64 { return uint64(x.u32())<<32 | uint64(x.u32()) }

// bool reads an XDR boolean, which is 0 or 1 and nothing else.
func (x *xdrReader) bool() bool {
	v := x.u32()
	if v > 1 {
		x.fail("boolean %d", v)
	}
	return v == 1
}

// fixed returns n bytes (rounded up to 4 on the wire).
func (x *xdrReader) fixed(n int) []byte {
	if x.err != nil {
		return nil
	}
	pad := (4 - n%4) % 4
	if n < 0 || len(x.b)-x.off < n+pad {
		x.fail("%d bytes: %w", n, errShort)
		return nil
	}
	v := x.b[x.off : x.off+n]
	x.off += n + pad
	return v
}

// opaque returns a variable-length opaque of at most limit bytes.
func (x *xdrReader) opaque(limit int) []byte {
	n := x.u32()
	if x.err == nil && n > uint32(limit) {
		x.fail("opaque of %d bytes, at most %d allowed", n, limit)
	}
	return x.fixed(int(n))
}

// skip passes over n bytes.
func (x *xdrReader) skip(n int) { x.fixed(n) }

// rest is how many bytes are left.
func (x *xdrReader) rest() int { return len(x.b) - x.off }

// xdrWriter builds XDR for tests and encoders.
type xdrWriter struct{ b []byte }

func (w *xdrWriter) u32(v uint32) { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *xdrWriter) u64(v uint64) { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *xdrWriter) opaque(v []byte) {
	w.u32(uint32(len(v)))
	w.fixed(v)
}
func (w *xdrWriter) fixed(v []byte) {
	w.b = append(w.b, v...)
	w.b = append(w.b, make([]byte, (4-len(v)%4)%4)...)
}
