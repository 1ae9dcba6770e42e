package madtext

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendXdump(t *testing.T) {
	tests := []struct {
		data []byte
		want string
	}{
		{nil, ""},
		{[]byte{0xab}, "ab\n"},
		{[]byte{1, 2, 3}, "0102 03\n"},
		{[]byte("0123456789abcdefXY"), "3031 3233 3435 3637 3839 6162 6364 6566\n5859\n"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, string(AppendXdump([]byte(nil), tt.data))); diff != "" {
			t.Errorf("AppendXdump(%x) (-want +got):\n%s", tt.data, diff)
		}
	}
}
