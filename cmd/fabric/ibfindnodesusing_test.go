package fabric

import (
	"strings"
	"testing"
)

// TestCompressHostlist checks against what the script's compress_hostlist
// printed for the same lists (perl 5.36, rdma-core 44).
func TestCompressHostlist(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Hca1", " Hca1"},
		{"Hca1,Hca3", " Hca1 Hca3"},
		{"Hca1,Hca2,Hca3", " Hca1-3"},
		{"H-0001,H-0002,H-0003,H-0005", " H-0001-0003 H-0005"},
		{"b2,a1,a2,c", " a1-2 b2 c"},
		{"node,node,x10,x9,x11", " node node x9-11"},
		{"h01,h1,h2", " h01 h1-2"},
	}
	for _, tt := range tests {
		var hosts []string
		if tt.in != "" {
			hosts = strings.Split(tt.in, ",")
		}
		if got := compressHostlist(hosts); got != tt.want {
			t.Errorf("compressHostlist(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatScriptGUID(t *testing.T) {
	for in, want := range map[string]string{
		"0x200001": "0x0000000000200001", "0X2000AB": "0x000000000X2000ab", "Switch1": "0x000000000Switch1",
		"0x0002c90300a1b2c4": "0x0002c90300a1b2c4",
	} {
		if got := formatScriptGUID(in); got != want {
			t.Errorf("formatScriptGUID(%q) = %q, want %q", in, got, want)
		}
	}
}
