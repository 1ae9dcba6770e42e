package mad

import (
	"errors"
	"testing"
)

// FuzzRMPPReceiver feeds the receiver arbitrary MADs (the input cut in
// Size-byte pieces) and checks it never panics, answers every segment it
// takes in order, and keeps a whole message consistent.
func FuzzRMPPReceiver(f *testing.F) {
	msg := make([]byte, 56+450)
	for i := range msg {
		msg[i] = byte(i)
	}
	(&RMPPHeader{Version: 1, Type: RMPPTypeData, Flags: RMPPActive}).MarshalTo(msg)
	var seed []byte
	for _, s := range RMPPSegments(msg, 56) {
		seed = append(seed, s...)
	}
	f.Add(seed)
	f.Add(seed[Size:])
	f.Add(append(append([]byte(nil), seed[:Size]...), seed...))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newRMPPReceiver(56)
		for len(in) > 0 {
			n := min(len(in), Size)
			step, err := r.add(in[:n])
			in = in[n:]
			var pe *rmppProtoError
			var re *RMPPError
			if err != nil && !errors.As(err, &pe) && !errors.As(err, &re) {
				t.Fatalf("error %T: %v", err, err)
			}
			if err != nil {
				return
			}
			if step.done {
				m := r.message()
				if len(m) < 56 || len(m) > 56+int(r.next-1)*(Size-56) {
					t.Fatalf("message of %d bytes after %d segments", len(m), r.next-1)
				}
			}
		}
	})
}
