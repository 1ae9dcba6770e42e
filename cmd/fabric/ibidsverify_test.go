package fabric

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVerifyIDs(t *testing.T) {
	head := "vendid=0x0\ndevid=0x0\n"
	sw := func(guid, lid string) string {
		return head + "switchguid=0x" + guid + "(" + guid + ")\nSwitch\t8 \"S-00000000002" + guid + "\"\t\t# \"sw\" base port 0 lid " + lid + " lmc 0\n"
	}
	ca := func(guid, port, lid string) string {
		return head + "caguid=0x" + guid + "\nCa\t1 \"H-0000000000" + guid + "\"\t\t# \"h\"\n[1](" + port + ") \t\"S-0000000000200000\"[1]\t\t# lid " + lid + " lmc 0 \"sw\" lid 1 4xSDR\n"
	}
	tests := []struct {
		name, topo string
		want       string
		bad        bool
	}{
		{"clean", sw("200000", "1") + ca("100000", "100001", "2"), "", false},
		{"LID 0", ca("100000", "100001", "0"), "LID 0 found for ca NodeGUID 0x100000\n", true},
		{"duplicate LID", sw("200000", "1") + ca("100000", "100001", "1"), "LID 1 already defined for NodeGUID 0x200000\n", true},
		{"duplicate node GUID", ca("100000", "100001", "2") + ca("100000", "100002", "3"), "NodeGUID 0x100000 already defined for LID 2\n", true},
		{"duplicate port GUID", ca("100000", "100001", "2") + ca("100003", "100001", "3"), "PortGUID 0x100001 already defined for LID 2\n", true},
		{"port GUID is a node GUID", ca("100000", "100001", "2") + ca("100003", "100000", "3"), "PortGUID 0x100000 is an invalid duplicate of a NodeGUID\n", true},
	}
	for _, tt := range tests {
		out, bad := verifyIDs([]byte(tt.topo))
		if diff := cmp.Diff(tt.want, string(out)); diff != "" || bad != tt.bad {
			t.Errorf("%s: bad %v (want %v); output (-want +got):\n%s", tt.name, bad, tt.bad, diff)
		}
	}
}
