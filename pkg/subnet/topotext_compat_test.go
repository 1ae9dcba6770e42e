package subnet

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func TestLinkCompatNames(t *testing.T) {
	tests := []struct {
		l    portLink
		want string
	}{
		{portLink{width: mad.LinkWidth4X, speed: mad.LinkSpeedSDR}, "4xSDR"},
		{portLink{width: mad.LinkWidth12X, speed: mad.LinkSpeedQDR}, "12xQDR"},
		{portLink{width: mad.LinkWidth1X, speed: mad.LinkSpeedQDR, fdr10: 1}, "1xFDR10"},
		{portLink{width: mad.LinkWidth2X, speed: mad.LinkSpeedQDR, ext: mad.LinkSpeedExtEDR}, "2xEDR"},
		{portLink{width: mad.LinkWidth8X, speed: mad.LinkSpeedDDR, ext: mad.LinkSpeedExtNDR}, "8xNDR"},
		{portLink{width: 3, speed: 3}, "?????"},
		{portLink{width: mad.LinkWidth4X, speed: mad.LinkSpeedQDR, ext: 3}, "4x???"},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, madtext.LinkWidthCompat(tt.l.width)+tt.l.speedString())
		want = append(want, tt.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected link names (-want +got):\n%s", diff)
	}
}

func TestDotEscape(t *testing.T) {
	if got, want := dotEscape(`a "b" \c`), `a \"b\" \\c`; got != want {
		t.Errorf("dotEscape = %q, want %q", got, want)
	}
}
