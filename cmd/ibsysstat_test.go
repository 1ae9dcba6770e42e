package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCPUInfo(t *testing.T) {
	many := func(n int) (in, want string) {
		var i, w strings.Builder
		for k := range n {
			fmt.Fprintf(&i, "processor\t: %d\nmodel name\t: M%d\ncpu MHz\t\t: %d\n\n", k, k, k)
			if k < maxCPUs {
				fmt.Fprintf(&w, "cpu %d: model  M%d MHZ  %d\n", k, k, k)
			}
		}
		return i.String(), w.String()
	}
	in300, want300 := many(300)
	tests := []struct {
		name, in, want string
	}{
		{"two", "processor\t: 0\nvendor_id\t: X\nmodel name\t: Intel Xeon\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\nmodel name\t: Intel Xeon\ncpu MHz\t\t: 2100.5\n",
			"cpu 0: model  Intel Xeon MHZ  2000.000\ncpu 1: model  Intel Xeon MHZ  2100.5\n"},
		{"no model or speed (an ARM board)", "processor\t: 0\nBogoMIPS\t: 48.00\n", "cpu 0: model (null) MHZ (null)\n"},
		{"fields before any processor", "model name\t: stray\n", ""},
		{"more than 256", in300, want300},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cpuinfo")
			if err := os.WriteFile(p, []byte(tt.in), 0o644); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(cpuInfo(p))); diff != "" {
				t.Errorf("cpuInfo (-want +got):\n%s", diff)
			}
		})
	}
	if got := string(cpuInfo(filepath.Join(t.TempDir(), "none"))); got != "couldn't open /proc/cpuinfo\n" {
		t.Errorf("a missing file: %q", got)
	}
}
