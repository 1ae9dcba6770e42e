package madtext_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madtext"
)

func TestLinkWidthCompat(t *testing.T) {
	var got []string
	for _, w := range []mad.LinkWidth{mad.LinkWidth1X, mad.LinkWidth2X, mad.LinkWidth4X, mad.LinkWidth8X, mad.LinkWidth12X, 0, 3, 32} {
		got = append(got, madtext.LinkWidthCompat(w))
	}
	want := []string{"1x", "2x", "4x", "8x", "12x", "??", "??", "??"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
