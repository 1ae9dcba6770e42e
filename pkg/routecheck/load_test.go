package routecheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	caSide = "{ CA Ports:01 SystemGUID:0000000000100000 NodeGUID:0000000000100000 PortGUID:0000000000100001 VenID:000000 DevID:0000 Rev:000000A1 {H0 HCA-1} LID:0001 PN:01 }"
	swSide = "{ SW Ports:08 SystemGUID:0000000000200000 NodeGUID:0000000000200000 PortGUID:0000000000200000 VenID:00000000 DevID:0000 Rev:000000A1 {S0} LID:0002 PN:03 }"
)

func TestReadSubnet(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		links   int
		nodes   []string
		wantErr string
	}{
		{"link", caSide + " " + swSide + " PHY=4x LOG=ACT SPD=2.5\n", 1,
			[]string{"S0000000000100000/U1 CA", "S0000000000200000/U1 SW"}, ""},
		{"no speed, CRLF", caSide + " " + swSide + " PHY=4x LOG=ACT\r\n", 1,
			[]string{"S0000000000100000/U1 CA", "S0000000000200000/U1 SW"}, ""},
		{"down link left out", caSide + " " + swSide + " PHY=4x LOG=ACT\n" + strings.Replace(caSide, "PN:01", "PN:02", 1) + " " + strings.Replace(swSide, "PN:03", "PN:04", 1) + " PHY=4x LOG=DWN\n", 1,
			[]string{"S0000000000100000/U1 CA", "S0000000000200000/U1 SW"}, ""},
		{"empty", "\n\n", 0, nil, "x.lst: no active links"},
		{"truncated", caSide[:40] + "\n", 0, nil, "x.lst:1: first port: missing"},
		{"second port missing", "\n" + caSide + " PHY=4x LOG=ACT\n", 0, nil, `x.lst:2: second port: want "{ "`},
		{"bad GUID", strings.Replace(caSide, "NodeGUID:0000000000100000", "NodeGUID:xyz", 1) + " " + swSide + " PHY=4x LOG=ACT\n", 0, nil, `x.lst:1: first port: bad NodeGUID "xyz"`},
		{"bad type", strings.Replace(caSide, "{ CA", "{ XX", 1) + " " + swSide + " PHY=4x LOG=ACT\n", 0, nil, "neither CA nor SW"},
		{"port past node", caSide + " " + strings.Replace(swSide, "PN:03", "PN:09", 1) + " PHY=4x LOG=ACT\n", 0, nil, "x.lst:1: invalid routing model: node S0000000000200000/U1 has no port 9"},
		{"no PHY", caSide + " " + swSide + "\n", 0, nil, "missing PHY= and LOG="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := New(0)
			links, err := ReadSubnet(f, strings.NewReader(tc.in), "x.lst")
			if tc.wantErr != "" {
				var pe *ParseError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &pe) {
					t.Fatalf("error %v, want a *ParseError with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var nodes []string
			for _, n := range f.Nodes() {
				nodes = append(nodes, n.Name+" "+n.Type.String())
			}
			if links != tc.links {
				t.Errorf("links %d, want %d", links, tc.links)
			}
			if diff := cmp.Diff(tc.nodes, nodes); diff != "" {
				t.Errorf("unexpected nodes (-want +got):\n%s", diff)
			}
		})
	}
}

// twoNodes is a fabric of one CA (LID 1) on port 3 of one switch (LID 2).
func twoNodes(t *testing.T) *Fabric {
	t.Helper()
	f := New(0)
	if _, err := ReadSubnet(f, strings.NewReader(caSide+" "+swSide+" PHY=4x LOG=ACT SPD=2.5\n"), "x.lst"); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReadFDBs(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		entries  int
		lft      []uint8
		wantErr  string
		errIsNil bool
	}{
		{"table", "dump_ucast_routes: Switch 0x0000000000200000\nLID    : Port : Hops : Optimal\n0x0001 : 003  : 01   : yes\n0x0002 : 000  : 00   : yes\n0x0004 : UNREACHABLE\n", 2,
			[]uint8{Unassigned, 3, 0, Unassigned, Unassigned}, "", true},
		{"no switch", "0x0001 : 003  : 01   : yes\n", 0, nil, "x.fdbs:1: forwarding entry before any switch line", false},
		{"unknown switch", "dump_ucast_routes: Switch 0x0000000000200009\n", 0, nil, "x.fdbs:1: switch 0x0000000000200009 is not in the subnet file", false},
		{"garbage", "dump_ucast_routes: Switch 0x0000000000200000\nhello\n", 0, nil, `x.fdbs:2: unrecognised line "hello"`, false},
		{"bad port", "dump_ucast_routes: Switch 0x0000000000200000\n0x0001 : 3x3\n", 0, nil, "x.fdbs:2: want", false},
		{"port too big", "dump_ucast_routes: Switch 0x0000000000200000\n0x0001 : 300 : 01\n", 0, nil, "x.fdbs:2: want", false},
		{"empty", "", 0, nil, "x.fdbs: no switch tables", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := twoNodes(t)
			entries, _, err := ReadFDBs(f, strings.NewReader(tc.in), "x.fdbs")
			if !tc.errIsNil {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sw := f.Node(0x200000)
			var lft []uint8
			for lid := 0; lid <= 4; lid++ {
				lft = append(lft, sw.LFT(lid))
			}
			if entries != tc.entries {
				t.Errorf("entries %d, want %d", entries, tc.entries)
			}
			if diff := cmp.Diff(tc.lft, lft); diff != "" {
				t.Errorf("unexpected LFT (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadMCFDBs(t *testing.T) {
	f := twoNodes(t)
	in := "\nSwitch 0x0000000000200000\nLID    : Out Port(s)\n0xC001 : 0x001  0x003 \n0xC002 : 0x000\n"
	entries, switches, err := ReadMCFDBs(f, strings.NewReader(in), "x.mcfdbs")
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint16][]int{}
	for _, m := range f.MulticastGroups() {
		got[m] = f.Node(0x200000).MFT(m)
	}
	want := map[uint16][]int{0xc001: {1, 3}, 0xc002: {0}}
	if diff := cmp.Diff(want, got); diff != "" || entries != 3 || switches != 1 {
		t.Errorf("entries %d switches %d; unexpected MFT (-want +got):\n%s", entries, switches, diff)
	}
	for in, want := range map[string]string{
		"0xC001 : 0x001\n":                            "x.mcfdbs:1: multicast entry before any switch line",
		"Switch 0x0000000000200000\n0x0001 : 0x1\n":   "x.mcfdbs:2: bad multicast LID",
		"Switch 0x0000000000200000\n0xC001 : 0x1FF\n": `x.mcfdbs:2: bad port "0x1FF"`,
		"Switch 0x0000000000200000\nfoo\n":            "x.mcfdbs:2: unrecognised line",
	} {
		if _, _, err := ReadMCFDBs(twoNodes(t), strings.NewReader(in), "x.mcfdbs"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestReadPathSLsAndSL2VL(t *testing.T) {
	f := twoNodes(t)
	if n, err := ReadPathSLs(f, strings.NewReader("# comment\n0x0000000000100000 2 3\n"), "psl"); err != nil || n != 1 {
		t.Fatalf("ReadPathSLs: %d, %v", n, err)
	}
	if f.NumSLs() != 4 || f.Node(0x100000).pathSL(2) != 3 || f.Node(0x100000).pathSL(1) != Unassigned {
		t.Errorf("SLs %d, path SL %d", f.NumSLs(), f.Node(0x100000).pathSL(2))
	}
	if n, err := ReadSL2VL(f, strings.NewReader("0x0000000000200000 3 1 0x01 0x23 0x45 0x67 0x89 0xab 0xcd 0xe1\n"), "slvl"); err != nil || n != 1 {
		t.Fatalf("ReadSL2VL: %d, %v", n, err)
	}
	sw := f.Node(0x200000)
	var got []uint8
	for sl := uint8(0); sl < 16; sl++ {
		got = append(got, sw.slvl(3, 1, sl))
	}
	if diff := cmp.Diff([]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 1}, got); diff != "" {
		t.Errorf("unexpected SL2VL (-want +got):\n%s", diff)
	}
	if f.NumVLs() != 15 || sw.slvl(1, 3, 0) != Unassigned {
		t.Errorf("VLs %d; a missing pair maps to %d", f.NumVLs(), sw.slvl(1, 3, 0))
	}
	for _, tc := range []struct{ in, want string }{
		{"0x0000000000100000 2\n", "psl:1: want"},
		{"0x0000000000100009 2 1\n", "psl:1: node 0x0000000000100009 is not in the subnet file"},
		{"0x0000000000100000 2 16\n", "psl:1: bad DLID or SL"},
		{"0xzz 2 1\n", "psl:1: bad GUID"},
	} {
		if _, err := ReadPathSLs(twoNodes(t), strings.NewReader(tc.in), "psl"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	if _, err := ReadSL2VL(twoNodes(t), strings.NewReader("0x0000000000200000 3 1 0x01\n"), "slvl"); err == nil || !strings.Contains(err.Error(), "slvl:1: want") {
		t.Errorf("short SL2VL line: %v", err)
	}
}

func TestReadRoots(t *testing.T) {
	got, err := ReadRoots(strings.NewReader("0x200000\n 0x0000000000200001  7\n"), "roots")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{0x200000, 0x200001, 7}, got); diff != "" {
		t.Errorf("unexpected roots (-want +got):\n%s", diff)
	}
	if _, err := ReadRoots(strings.NewReader("0x2\nbogus\n"), "roots"); err == nil || err.Error() != `roots:2: bad GUID "bogus"` {
		t.Errorf("error %v", err)
	}
}

// The loaders never panic, whatever the input, and fail only with a
// *ParseError.
func fuzzLoader(f *testing.F, seeds []string, load func(*Fabric, string) error) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fab := New(0)
		if _, err := ReadSubnet(fab, strings.NewReader(caSide+" "+swSide+" PHY=4x LOG=ACT\n"), "s"); err != nil {
			t.Fatal(err)
		}
		if err := load(fab, in); err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
		}
	})
}

func FuzzReadSubnet(f *testing.F) {
	fuzzLoader(f, []string{caSide + " " + swSide + " PHY=4x LOG=ACT SPD=2.5\n", "{ SW Ports:FF }"}, func(fab *Fabric, in string) error {
		_, err := ReadSubnet(New(1), strings.NewReader(in), "x")
		return err
	})
}

func FuzzReadFDBs(f *testing.F) {
	fuzzLoader(f, []string{"dump_ucast_routes: Switch 0x0000000000200000\nLID    : Port : Hops : Optimal\n0x0001 : 003  : 01   : yes\n0x0004 : UNREACHABLE\n"}, func(fab *Fabric, in string) error {
		_, _, err := ReadFDBs(fab, strings.NewReader(in), "x")
		return err
	})
}

func FuzzReadMCFDBs(f *testing.F) {
	fuzzLoader(f, []string{"Switch 0x0000000000200000\nLID    : Out Port(s)\n0xC001 : 0x001  0x003 \n"}, func(fab *Fabric, in string) error {
		_, _, err := ReadMCFDBs(fab, strings.NewReader(in), "x")
		return err
	})
}

func FuzzReadPathSLs(f *testing.F) {
	fuzzLoader(f, []string{"0x0000000000100000 2 3\n"}, func(fab *Fabric, in string) error {
		_, err := ReadPathSLs(fab, strings.NewReader(in), "x")
		return err
	})
}

func FuzzReadSL2VL(f *testing.F) {
	fuzzLoader(f, []string{"0x0000000000200000 3 1 0x01 0x23 0x45 0x67 0x89 0xab 0xcd 0xe1\n"}, func(fab *Fabric, in string) error {
		_, err := ReadSL2VL(fab, strings.NewReader(in), "x")
		return err
	})
}

func FuzzReadRoots(f *testing.F) {
	fuzzLoader(f, []string{"0x200000\n7\n"}, func(fab *Fabric, in string) error {
		_, err := ReadRoots(strings.NewReader(in), "x")
		return err
	})
}
