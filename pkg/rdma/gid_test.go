package rdma

import "testing"

// TestGIDString checks GIDs print as glibc's inet_ntop prints them, which
// is what infiniband-diags shows.
func TestGIDString(t *testing.T) {
	tests := []struct {
		prefix uint64
		guid   GUID
		want   string
	}{
		{0xfe80000000000000, 0x0002c90300001492, "fe80::2:c903:0:1492"},
		{0xfe80000000000000, 0x0000000000200001, "fe80::20:1"},
		{0, 0x0000000000200001, "::0.32.0.1"}, // IPv4-compatible form
		{0, 0x0000000000000001, "::1"},
		{0, 0, "::"},
		{0, 0x0000ffff01020304, "::ffff:1.2.3.4"},
		{0xfe80000000000000, 0, "fe80::"},
		{0x20010db800000000, 0x0000000100000001, "2001:db8::1:0:1"},
	}
	for _, tt := range tests {
		if got := NewGID(tt.prefix, tt.guid).String(); got != tt.want {
			t.Errorf("GID(%#x, %v) = %q, want %q", tt.prefix, tt.guid, got, tt.want)
		}
	}
}
