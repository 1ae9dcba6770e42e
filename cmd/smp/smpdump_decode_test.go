package smp

import (
	"strings"
	"testing"
)

// TestSmpdumpDecode: -p prints the whole reply decoded (python-rdma's
// smpdump --decode): the header, with a DR reply's D bit in its status,
// then the attribute's fields as smpquery labels them.
func TestSmpdumpDecode(t *testing.T) {
	for _, args := range [][]string{{"-p", "0,1", "0x10"}, {"--decode", "-D", "0", "0x11"}} {
		got, _, err := runSMPTool(t, "smpdump", args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"BaseVersion:.....................1\n", "Method:..........................0x81 (GetResp)\n",
			"Status:..........................0x8000\n", "AttributeModifier:...............0x00000000\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("smpdump %v: no %q in\n%s", args, want, got)
			}
		}
		if args[len(args)-1] == "0x10" && !strings.Contains(got, "# NodeDescription\nNodeDesc:........................'Hca1 HCA-1'\n") {
			t.Errorf("smpdump %v: no NodeDescription in\n%s", args, got)
		}
		if args[len(args)-1] == "0x11" && !strings.Contains(got, "# NodeInfo\nBaseVers:") {
			t.Errorf("smpdump %v: no NodeInfo in\n%s", args, got)
		}
	}
}
