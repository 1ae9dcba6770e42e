package perf

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
)

func TestHumanReadable(t *testing.T) {
	tests := []struct {
		v    uint64
		data bool
		want string
	}{
		{0, false, " [X == 0 (0.000)]"},
		{92, false, " [X == 92 (92.000)]"},
		{1051, false, " [X == 1051 (1.026K)]"},
		{6624, true, " [X == 6624 (25.875KB)]"},
		{177408, true, " [X == 177408 (693.000KB)]"},
		{300, true, " [X == 300 (1.172KB)]"}, // 1200 bytes: past 1024, one unit up
		{5 << 30, false, " [X == 5368709120 (5.000G)]"},
	}
	for _, tt := range tests {
		if got := counterText("X", tt.v, tt.data); got != tt.want {
			t.Errorf("counterText(%d, %v) = %q, want %q", tt.v, tt.data, got, tt.want)
		}
	}
}

func TestParseCULong(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"10", 10}, {" 0x1f", 31}, {"010", 8}, {"0", 0}, {"", 0}, {"12abc", 12}, {"x", 0}, {"0x", 0},
	}
	for _, tt := range tests {
		got, err := parseCULong(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseCULong(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestReadThresholds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t")
	os.WriteFile(path, []byte("# c\nSymbolErrorCounter=10\nPortXmitWait=0x10\nUnknown=3\nLinkDownedCounter =4\n\n"), 0o644)
	th, err := readThresholds(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]uint64{"SymbolErrorCounter": 10, "PortXmitWait": 16}, th.values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if want := "Thresholds: [SymbolErrorCounter = 10][PortXmitWait = 16]"; th.text != want {
		t.Errorf("text %q, want %q", th.text, want)
	}
	th, err = readThresholds(filepath.Join(dir, "none"))
	if err != nil || th.text != "(null)" || len(th.values) != 0 {
		t.Errorf("missing file: %+v, %v", th, err)
	}
}

func TestSuppressedFields(t *testing.T) {
	got := suppressedFields("PortXmitDiscards,bogus,PortSelect,PortXmitWait")
	if diff := cmp.Diff([]string{"PortXmitDiscards", "PortSelect", "PortXmitWait"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCounterLists checks the counter lists written out as literals (so
// that no init builds them) against the mad lists they are made of.
func TestCounterLists(t *testing.T) {
	want := append(slices.Clone(mad.PortErrorCounters), "PortXmitWait")
	if diff := cmp.Diff(want, thresholdNames); diff != "" {
		t.Errorf("thresholdNames (-want +got):\n%s", diff)
	}
	want = slices.Concat(mad.PortErrorCounters, mad.PortDataCounters)
	if diff := cmp.Diff(want, swportwatchCounters); diff != "" {
		t.Errorf("swportwatchCounters (-want +got):\n%s", diff)
	}
}
