package endport

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// targetSeeds are inputs of every form, good and bad.
var targetSeeds = []string{
	"", " ", "12", "012", "0x1a", "0X1A", "0x", "0xg", "0x00001", "0x0002c90300a1b2c4",
	"0x10002c90300a1b2c4", "65536", "49152", "-1", "0", "00", "0x0", "0,1,3", "0,256", "1,2",
	"0,1,3,", "0, 1", "0,,1", "0002:c903:00a1:b2c4", "0:0:0:0", "fe80::2:c903:a1:b2c4", "::",
	"::ffff:1.2.3.4", "::1%", "fe80::1%mlx5_0/x", "fe80::1%mlx5_0/1", "fe80::1%0x1a",
	"fe80::1%fe80::2", "fe80::1%1", "1.2.3.4", "mlx5_0",
	"IBPath(DLID=12, SL=1)", "IBPath()", "IBDRPath(DLID=6, drPath=0:12:)",
	"IBPath(end_port='mlx4_0/1', DGID=GID('fe80::1'), has_grh=True)",
	"IBDRPath(end_port=None, DLID=0xffff, SLID=0xffff, dqpn=0, drPath=0:1:, qkey=0x0, sqpn=0)",
	"IBPath(DLID=1, SGID=fe80::2, hop_limit=255, traffic_class=0x10, flow_label=0xfffff, pkey=0x7fff)",
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range targetSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k := Any; k <= FullPath; k++ {
			got, err := ParseTarget(s, k)
			if err != nil {
				if strings.ContainsRune(err.Error(), '\n') {
					t.Errorf("ParseTarget(%q, %v): error is not one line: %q", s, k, err)
				}
				continue
			}
			if !accepts(k, got) {
				t.Errorf("ParseTarget(%q, %v) = %v of kind %v", s, k, got, got.Kind)
			}
		}
		got, err := ParseTarget(s, Any)
		if err != nil {
			return
		}
		if got.Kind == Any || got.Kind > FullPath {
			t.Fatalf("ParseTarget(%q) gave kind %v", s, got.Kind)
		}
		str := got.String()
		again, err := ParseTarget(str, Any)
		if err != nil {
			t.Fatalf("ParseTarget(%q) = %q, which does not parse: %v", s, str, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("ParseTarget(%q) = %q: unexpected round trip (-first +second):\n%s", s, str, diff)
		}
		if again.String() != str {
			t.Errorf("String not canonical: %q, then %q", str, again.String())
		}
		if _, err := ParseTarget(s, got.Kind); err != nil {
			t.Errorf("ParseTarget(%q, %v): %v", s, got.Kind, err)
		}
	})
}

func FuzzParseLocal(f *testing.F) {
	for _, s := range []string{
		"", "mlx5_0", "mlx5_0/1", "mlx5_0/01", "mlx5_0/0", "1", "0", "256", "0x1a", "0x0002c90300a1b2c4",
		"0002:c903:00a1:b2c4", "fe80::2:c903:a1:b2c4", "::", "mlx5_0/", "/1", "m@x", "..", "fe80::1%mlx5_0",
		"0x0002c90300a1b2c3/1", "0002:c903:00a1:b2c3/0", "0x0/1", "fe80::1/1", "0x12/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLocal(s)
		if err != nil {
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("ParseLocal(%q): error is not one line: %q", s, err)
			}
			return
		}
		str := got.String()
		again, err := ParseLocal(str)
		if err != nil {
			t.Fatalf("ParseLocal(%q) = %q, which does not parse: %v", s, str, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("ParseLocal(%q) = %q: unexpected round trip (-first +second):\n%s", s, str, diff)
		}
		if again.String() != str {
			t.Errorf("String not canonical: %q, then %q", str, again.String())
		}
		ca := ""
		switch {
		case got.Kind == ByName && got.CA != "":
			ca = got.CA
		case got.Kind == ByNodeGUID:
			ca = got.GUID.String()
		}
		if ca != "" {
			if l, err := FromFlags(ca, int(got.Port)); err != nil || l != got {
				t.Errorf("FromFlags(%q, %d) = %v, %v; want %v", ca, got.Port, l, err, got)
			}
		}
	})
}

// FuzzFromFlagArgs checks -C and -P as typed: errors are one line, a -P
// that is a port number means that port (the infiniband-diags meaning is
// kept whatever else -P takes), and a -P alone that is no number means
// what --port would.
func FuzzFromFlagArgs(f *testing.F) {
	for _, s := range [][2]string{
		{"", ""}, {"mlx5_0", "1"}, {"mlx5_0", "0x10"}, {"", "010"}, {"", "mlx5_0/1"}, {"", "0x0002c90300a1b2c4"},
		{"", "0x0000000000000001"}, {"", "fe80::1"}, {"0x0002c90300a1b2c3", "2"}, {"0002:c903:00a1:b2c3", ""},
		{"mlx5_0", "mlx5_0/1"}, {"", "256"}, {"", "0x100"}, {"", "-1"}, {"0x0", "1"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, ca, port string) {
		got, err := FromFlagArgs(ca, port)
		if err != nil {
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("FromFlagArgs(%q, %q): error is not one line: %q", ca, port, err)
			}
			return
		}
		if n, reason := parseNumber(port, 255); port == "" || reason == "" {
			want, err := FromFlags(ca, int(n))
			if err != nil || want != got {
				t.Errorf("FromFlagArgs(%q, %q) = %v; want FromFlags(%q, %d) = %v, %v", ca, port, got, ca, n, want, err)
			}
			return
		}
		if ca != "" {
			t.Fatalf("FromFlagArgs(%q, %q) = %v: with -C, -P must be a port number", ca, port, got)
		}
		if want, err := ParseLocal(port); err != nil || want != got {
			t.Errorf("FromFlagArgs(%q, %q) = %v; want ParseLocal(%q) = %v, %v", ca, port, got, port, want, err)
		}
	})
}

func FuzzParsePathSpec(f *testing.F) {
	for _, s := range targetSeeds {
		if strings.ContainsRune(s, '(') {
			f.Add(s)
		}
	}
	f.Add("IBDRPath(drPath=0:1:3, drDLID=9, drSLID=3, end_port=\"fe80::1\")")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParsePathSpec(s)
		if err != nil {
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("ParsePathSpec(%q): error is not one line: %q", s, err)
			}
			return
		}
		str := got.String()
		again, err := ParsePathSpec(str)
		if err != nil {
			t.Fatalf("ParsePathSpec(%q) = %q, which does not parse: %v", s, str, err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("ParsePathSpec(%q) = %q: unexpected round trip (-first +second):\n%s", s, str, diff)
		}
	})
}
