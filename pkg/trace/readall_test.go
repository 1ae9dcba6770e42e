package trace

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadAll reads whole captures and ones cut short: a cut inside a
// record keeps the frames before it, a cut header is no result.
func TestReadAll(t *testing.T) {
	whole, err := os.ReadFile("testdata/rxe-write.pcap")
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Frames, Messages, Seen int
		Cut                    int // TruncatedError.Frames, -1 for none
		Err                    bool
	}
	for _, tt := range []struct {
		name string
		data []byte
		want got
	}{
		{"whole", whole, got{Frames: 40, Messages: 10, Seen: 40, Cut: -1}},
		{"cut in the last record", whole[:len(whole)-10], got{Frames: 39, Messages: 10, Seen: 39, Cut: 39, Err: true}},
		{"cut header", whole[:10], got{Cut: -1, Err: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seen := 0
			res, err := ReadAll(bytes.NewReader(tt.data), ReadOptions{Packet: func(*Packet) { seen++ }})
			g := got{Seen: seen, Cut: -1, Err: err != nil}
			var cut *TruncatedError
			if errors.As(err, &cut) {
				g.Cut = cut.Frames
			}
			if res != nil {
				g.Frames, g.Messages = res.Frames, len(res.Messages)
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
