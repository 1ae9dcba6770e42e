package rdma

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bwMessages are one message of each kind the channel carries, as the
// client and the server send them.
var bwMessages = []struct {
	kind string
	msg  any
	new  func() any
}{
	{"params", &bwParams{Size: 65536, Iters: 5000, TxDepth: 128, CQMod: 1, Inline: 220, Seed: 7}, func() any { return new(bwParams) }},
	{"dest", &bwDest{LID: 1, QPN: 0x11, PSN: 0xabcdef, GID: [16]byte{0: 0xfe, 1: 0x80, 15: 1}, RKey: 0x1234, Addr: 0x7f0000001000, MTU: 5},
		func() any { return new(bwDest) }},
	{"go", &bwGo{Size: 8}, func() any { return new(bwGo) }},
	{"result", &bwResultMsg{Stats: &bwStats{Size: 8, Iters: 5, PeakPerMsg: 1.5}, SentSum: "ab"}, func() any { return new(bwResultMsg) }},
	{"check", &bwCheckMsg{RecvSum: "cd"}, func() any { return new(bwCheckMsg) }},
}

func TestBwMessageRoundTrip(t *testing.T) {
	for _, m := range bwMessages {
		t.Run(m.kind, func(t *testing.T) {
			line, err := appendBwMessage(nil, m.kind, m.msg)
			if err != nil {
				t.Fatal(err)
			}
			if line[len(line)-1] != '\n' {
				t.Errorf("line %q does not end in a newline", line)
			}
			got := m.new()
			if kind, err := decodeBwMessage(line, m.kind, got); err != nil || kind != m.kind {
				t.Fatalf("decode %q: kind %q, %v", line, kind, err)
			}
			if diff := cmp.Diff(m.msg, got); diff != "" {
				t.Errorf("unexpected %s (-want +got):\n%s", m.kind, diff)
			}
			other := m.new()
			if kind, err := decodeBwMessage(line, "other", other); err != nil || kind != m.kind || !cmp.Equal(other, m.new()) {
				t.Errorf("decoded as another kind: kind %q, %v, %+v", kind, err, other)
			}
		})
	}
	for _, bad := range []string{"", "{", `{"kind":"go","body":{"size":"x"}}`, `[1]`} {
		if _, err := decodeBwMessage([]byte(bad), "go", new(bwGo)); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// FuzzBwMessage decodes any line as each kind: no panic, and a message
// that decodes encodes to a line that decodes to the same message.
func FuzzBwMessage(f *testing.F) {
	for _, m := range bwMessages {
		line, err := appendBwMessage(nil, m.kind, m.msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(line)
	}
	f.Add([]byte(`{"kind":"go","body":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, m := range bwMessages {
			v := m.new()
			kind, err := decodeBwMessage(line, m.kind, v)
			if err != nil || kind != m.kind {
				continue
			}
			again, err := appendBwMessage(nil, m.kind, v)
			if err != nil {
				t.Fatalf("%s %+v does not encode: %v", m.kind, v, err)
			}
			w := m.new()
			if _, err := decodeBwMessage(again, m.kind, w); err != nil || !cmp.Equal(v, w) {
				t.Fatalf("%s round trip: %+v, %v; want %+v", m.kind, w, err, v)
			}
		}
	})
}
