package rdmacm

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var (
	any6  = netip.IPv6Unspecified()
	any4  = netip.IPv4Unspecified()
	lo6   = netip.IPv6Loopback()
	lo4   = netip.MustParseAddr("127.0.0.1")
	gaiPf = netip.MustParsePrefix
)

func mustGaiConf(t *testing.T, s string) GaiTables {
	t.Helper()
	tab, err := ParseGaiConf(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// The cases are what glibc 2.36 gave in the VM (scripts/vm/checks/76-rdma-xrc.sh):
// [::] first with lo down, 0.0.0.0 first with lo up; and the gai.conf
// lines that turn each round.
func TestPassiveOrder(t *testing.T) {
	tests := []struct {
		name string
		src  WildcardSources
		conf string
		want []netip.Addr
	}{
		{"lo up: rule 5, 0.0.0.0's label is 127.0.0.1's", WildcardSources{lo6, lo4}, "", []netip.Addr{any4, any6}},
		{"lo down: rule 6, ::/96 above ::ffff:0:0/96", WildcardSources{}, "", []netip.Addr{any6, any4}},
		{"lo taken down after being up (127.0.0.1 kept): rule 1", WildcardSources{IPv4: lo4}, "", []netip.Addr{any4, any6}},
		{"IPv4 unreachable: rule 1", WildcardSources{IPv6: lo6}, "", []netip.Addr{any6, any4}},
		{"lo up, :: labelled as ::1: rule 6", WildcardSources{lo6, lo4}, "label ::/96 0\n", []netip.Addr{any6, any4}},
		{"lo up, every label 1: rule 6", WildcardSources{lo6, lo4}, "label ::/0 1\n", []netip.Addr{any6, any4}},
		{"lo up, every label 1, IPv4 precedence 100", WildcardSources{lo6, lo4}, "label ::/0 1\nprecedence ::ffff:0:0/96 100\n", []netip.Addr{any4, any6}},
		{"lo down, IPv4 precedence 100 (Debian's gai.conf line)", WildcardSources{}, "precedence ::ffff:0:0/96  100\n", []netip.Addr{any4, any6}},
		{"lo up, 127/8 scope 14: rule 2", WildcardSources{lo6, lo4}, "scopev4 ::ffff:127.0.0.0/104 14\n", []netip.Addr{any4, any6}},
		{"lo down, 0/8 scope 1: rule 8", WildcardSources{}, "precedence ::/0 5\nscopev4 0.0.0.0/8 1\n", []netip.Addr{any4, any6}},
		{"lo down, equal precedence and scope: rule 10", WildcardSources{}, "precedence ::/0 5\n", []netip.Addr{any6, any4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PassiveOrder(tt.src, mustGaiConf(t, tt.conf))
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("unexpected order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGaiConf(t *testing.T) {
	def := DefaultGaiTables()
	tests := []struct {
		name string
		conf string
		want GaiTables
	}{
		{"empty", "", def},
		{"comments and unknown lines", "# label ::/0 3\nreload yes\nfoo ::/0 1\nlabel ::/0\n", def},
		{"labels replace the table, catch-all added, longest first",
			"label ::ffff:0:0/96 4 # IPv4\nlabel 2001:db8::/32 9\n",
			GaiTables{Labels: []GaiPrefixValue{{gaiPf("::ffff:0:0/96"), 4}, {gaiPf("2001:db8::/32"), 9}, {gaiPf("::/0"), 1}}, Precedence: def.Precedence, ScopesV4: def.ScopesV4}},
		{"a catch-all given is kept",
			"precedence ::/0 7\nprecedence ::1 60\n",
			GaiTables{Labels: def.Labels, Precedence: []GaiPrefixValue{{gaiPf("::1/128"), 60}, {gaiPf("::/0"), 7}}, ScopesV4: def.ScopesV4}},
		{"scopev4 mapped and plain",
			"scopev4 ::ffff:10.0.0.0/104 5\nscopev4 192.168.0.0/16 5\n",
			GaiTables{Labels: def.Labels, Precedence: def.Precedence, ScopesV4: []GaiPrefixValue{{gaiPf("192.168.0.0/16"), 5}, {gaiPf("10.0.0.0/8"), 5}, {gaiPf("0.0.0.0/0"), 14}}}},
		{"bad lines skipped",
			"label 10.0.0.0/8 3\nlabel ::/129 3\nlabel fe80::%eth0/64 3\nlabel ::/0 -1\nlabel ::/0 x\nscopev4 ::/64 2\nscopev4 10.0.0.0/33 2\nprecedence ::/0 2147483648\n", def},
		{"host bits masked", "label 2001:db8::1/32 9\n",
			GaiTables{Labels: []GaiPrefixValue{{gaiPf("2001:db8::/32"), 9}, {gaiPf("::/0"), 1}}, Precedence: def.Precedence, ScopesV4: def.ScopesV4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustGaiConf(t, tt.conf)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("unexpected tables (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadGaiConfMissing(t *testing.T) {
	got := ReadGaiConf(t.TempDir() + "/gai.conf")
	if diff := cmp.Diff(DefaultGaiTables(), got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("unexpected tables (-want +got):\n%s", diff)
	}
}

// The C library's order and the Go rules' agree on this machine (with
// cgo; without it they are the same code).
func TestPassiveAddrsAsRules(t *testing.T) {
	got, err := PassiveAddrs(7471)
	if err != nil {
		t.Fatal(err)
	}
	var want []netip.AddrPort
	for _, a := range PassiveOrder(LocalSources(), ReadGaiConf(GaiConfPath)) {
		want = append(want, netip.AddrPortFrom(a, 7471))
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
		t.Errorf("unexpected order (-want: the Go rules, +got: getaddrinfo) with sources %+v:\n%s", LocalSources(), diff)
	}
	first, err := PassiveAddr(7471)
	if err != nil || first != got[0] {
		t.Errorf("PassiveAddr = %v, %v; want %v", first, err, got[0])
	}
}

func FuzzParseGaiConf(f *testing.F) {
	f.Add("label ::1/128 0\nprecedence ::ffff:0:0/96 100\nscopev4 ::ffff:169.254.0.0/112 2\n")
	f.Add("scopev4 127.0.0.0/8 2 # x\nreload no\n")
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ParseGaiConf(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, table := range [][]GaiPrefixValue{tab.Labels, tab.Precedence, tab.ScopesV4} {
			if len(table) == 0 || table[len(table)-1].Prefix.Bits() != 0 {
				t.Fatalf("table without a catch-all last: %v", table)
			}
			for i := 1; i < len(table); i++ {
				if table[i].Prefix.Bits() > table[i-1].Prefix.Bits() {
					t.Fatalf("table not longest prefix first: %v", table)
				}
			}
		}
		for _, src := range []WildcardSources{{}, {lo6, lo4}, {IPv4: lo4}} {
			if got := PassiveOrder(src, tab); len(got) != 2 || got[0] == got[1] {
				t.Fatalf("PassiveOrder = %v", got)
			}
		}
	})
}

// TestPassiveAddrErrors: getaddrinfo's failure comes back as an
// *AddrInfoError, and an answer without an address is EAI_NONAME's.
func TestPassiveAddrErrors(t *testing.T) {
	saved := passiveLookup
	defer func() { passiveLookup = saved }()
	tests := []struct {
		name   string
		lookup func(uint16) ([]netip.AddrPort, error)
		want   string
		code   int
	}{
		{"getaddrinfo fails", func(uint16) ([]netip.AddrPort, error) {
			return nil, &AddrInfoError{Code: -11, Msg: "System error"}
		}, "getaddrinfo: System error (-11)", -11},
		{"no address", func(uint16) ([]netip.AddrPort, error) { return nil, nil },
			"getaddrinfo: Name or service not known (-2)", -2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			passiveLookup = tt.lookup
			_, err := PassiveAddr(7471)
			var ae *AddrInfoError
			if !errors.As(err, &ae) || err.Error() != tt.want || ae.Code != tt.code {
				t.Errorf("PassiveAddr: %v; want %q, code %d", err, tt.want, tt.code)
			}
		})
	}
}
