package endport

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestParseTarget(t *testing.T) {
	gid := mustGID(t, "fe80::2:c903:a1:b2c4")
	tests := []struct {
		in   string
		want Target
		str  string // canonical form
	}{
		{"12", Target{Kind: LID, LID: 12}, "12"},
		{"012", Target{Kind: LID, LID: 12}, "12"}, // never octal
		{"00000012", Target{Kind: LID, LID: 12}, "12"},
		{"1", Target{Kind: LID, LID: 1}, "1"},
		{"49151", Target{Kind: LID, LID: 0xbfff}, "49151"},
		{"0x1a", Target{Kind: LID, LID: 0x1a}, "26"},
		{"0X1A", Target{Kind: LID, LID: 0x1a}, "26"},
		{"0xbfff", Target{Kind: LID, LID: 0xbfff}, "49151"},
		{"0x0001", Target{Kind: LID, LID: 1}, "1"},
		{"0x00001", Target{Kind: GUID, GUID: 1}, "0x0000000000000001"}, // 5 digits: a GUID
		{"0x2c9000100d051", Target{Kind: GUID, GUID: 0x2c9000100d051}, "0x0002c9000100d051"},
		{"0x0002c90300a1b2c4", Target{Kind: GUID, GUID: 0x0002c90300a1b2c4}, "0x0002c90300a1b2c4"},
		{"0xFFFFFFFFFFFFFFFF", Target{Kind: GUID, GUID: 0xffffffffffffffff}, "0xffffffffffffffff"},
		{"0002:c903:00a1:b2c4", Target{Kind: GUID, GUID: 0x0002c90300a1b2c4}, "0x0002c90300a1b2c4"},
		{"2:c903:a1:b2c4", Target{Kind: GUID, GUID: 0x0002c90300a1b2c4}, "0x0002c90300a1b2c4"},
		{"0:0:0:1", Target{Kind: GUID, GUID: 1}, "0x0000000000000001"},
		{"fe80::2:c903:a1:b2c4", Target{Kind: GID, GID: gid}, "fe80::2:c903:a1:b2c4"},
		{"FE80:0000:0000:0000:0002:C903:00A1:B2C4", Target{Kind: GID, GID: gid}, "fe80::2:c903:a1:b2c4"},
		{"::1", Target{Kind: GID, GID: mustGID(t, "::1")}, "::1"},
		{"::ffff:1.2.3.4", Target{Kind: GID, GID: mustGID(t, "::ffff:1.2.3.4")}, "::ffff:1.2.3.4"},
		{"fe80::2:c903:a1:b2c4%mlx5_0/1", Target{Kind: ScopedGID, GID: gid, Scope: Local{CA: "mlx5_0", Port: 1}}, "fe80::2:c903:a1:b2c4%mlx5_0/1"},
		{"fe80::2:c903:a1:b2c4%mlx5_0", Target{Kind: ScopedGID, GID: gid, Scope: Local{CA: "mlx5_0"}}, "fe80::2:c903:a1:b2c4%mlx5_0"},
		{"fe80::2:c903:a1:b2c4%mlx5_0/0", Target{Kind: ScopedGID, GID: gid, Scope: Local{CA: "mlx5_0"}}, "fe80::2:c903:a1:b2c4%mlx5_0"},
		{"fe80::1%0002:c903:00a1:b2c4", Target{Kind: ScopedGID, GID: mustGID(t, "fe80::1"), Scope: Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}}, "fe80::1%0x0002c90300a1b2c4"},
		{"fe80::1%fe80::2", Target{Kind: ScopedGID, GID: mustGID(t, "fe80::1"), Scope: Local{Kind: ByGID, GID: mustGID(t, "fe80::2")}}, "fe80::1%fe80::2"},
		{"0", Target{Kind: DirectRoute, DR: DRPath{0}}, "0"},
		{"00", Target{Kind: DirectRoute, DR: DRPath{0}}, "0"},
		{"0,1", Target{Kind: DirectRoute, DR: DRPath{0, 1}}, "0,1"},
		{"0,1,3", Target{Kind: DirectRoute, DR: DRPath{0, 1, 3}}, "0,1,3"},
		{"0,01,255", Target{Kind: DirectRoute, DR: DRPath{0, 1, 255}}, "0,1,255"},
		{"0,1,3,", Target{Kind: DirectRoute, DR: DRPath{0, 1, 3}}, "0,1,3"}, // python-rdma's form
		{"0,", Target{Kind: DirectRoute, DR: DRPath{0}}, "0"},
		{"IBPath(DLID=12, SL=1)", Target{Kind: FullPath, Spec: &PathSpec{DLID: ptr[rdma.LID](12), SL: ptr[uint8](1)}}, "IBPath(DLID=12, SL=1)"},
		{"IBDRPath(DLID=6,drPath=0:12)", Target{Kind: FullPath, Spec: &PathSpec{DR: true, DLID: ptr[rdma.LID](6), DRPath: DRPath{0, 12}}}, "IBDRPath(DLID=6, drPath=0:12:)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in, Any)
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected target (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.str, got.String()); diff != "" {
				t.Errorf("unexpected String (-want +got):\n%s", diff)
			}
			text, _ := got.MarshalText()
			if diff := cmp.Diff(tt.str, string(text)); diff != "" {
				t.Errorf("unexpected MarshalText (-want +got):\n%s", diff)
			}
			// The kind the format decides passes its own assertion.
			if _, err := ParseTarget(tt.in, got.Kind); err != nil {
				t.Errorf("ParseTarget(%q, %v): %v", tt.in, got.Kind, err)
			}
		})
	}
}

func TestParseTargetErrors(t *testing.T) {
	const anyForms = "want a LID (12 or 0x1a, 1 to 49151), a port GUID (0x0002c90300a1b2c4 with more than 4 hex digits, or 0002:c903:00a1:b2c4), " +
		"a GID (fe80::2:c903:a1:b2c4), a scoped GID (fe80::2:c903:a1:b2c4%mlx5_0/1), a DR path (0,1,3; 0 is the local port) or a path spec (IBPath(DLID=12, SL=1))"
	const drForm = "want port numbers 0 to 255 separated by commas, starting with 0, such as 0,1,3"
	long := "0" + strings.Repeat(",1", 64) // 64 hops, one too many
	tests := []struct {
		in   string
		want Kind
		err  string
	}{
		{"", Any, `invalid target "": empty; ` + anyForms},
		{" ", Any, `invalid target " ": contains whitespace; ` + anyForms},
		{" 12", Any, `invalid target " 12": contains whitespace; ` + anyForms},
		{"12\n", Any, `invalid target "12\n": contains whitespace; ` + anyForms},
		{"xyz", Any, `invalid target "xyz": ` + anyForms},
		{"mlx5_0", Any, `invalid target "mlx5_0": ` + anyForms},
		{"1.2.3.4", Any, `invalid target "1.2.3.4": ` + anyForms},
		{"-1", Any, `invalid target "-1": negative; ` + anyForms},
		{"+1", Any, `invalid target "+1": ` + anyForms},
		{"1e3", Any, `invalid target "1e3": ` + anyForms},
		{"xyz", LID, `invalid LID "xyz": want a LID (12 or 0x1a, 1 to 49151)`},
		{"xyz", GUID, `invalid GUID "xyz": want a port GUID (0x0002c90300a1b2c4 with more than 4 hex digits, or 0002:c903:00a1:b2c4)`},
		{"", DirectRoute, `invalid DR path "": empty; want a DR path (0,1,3; 0 is the local port)`},
		// LIDs.
		{"65536", Any, `invalid LID "65536": out of range 1 to 49151`},
		{"99999999999999999999999", Any, `invalid LID "99999999999999999999999": out of range 1 to 49151`},
		{"65535", Any, `invalid LID "65535": not a unicast LID: want 1 to 49151 (0xbfff)`},
		{"49152", Any, `invalid LID "49152": not a unicast LID: want 1 to 49151 (0xbfff)`},
		{"0xc000", Any, `invalid LID "0xc000": not a unicast LID: want 1 to 49151 (0xbfff)`},
		{"0xffff", Any, `invalid LID "0xffff": not a unicast LID: want 1 to 49151 (0xbfff)`},
		{"0x0", Any, `invalid LID "0x0": LID 0 is reserved (0 alone is the DR path to the local port)`},
		{"0x0000", Any, `invalid LID "0x0000": LID 0 is reserved (0 alone is the DR path to the local port)`},
		{"0x", Any, `invalid LID or GUID "0x": want hex digits after 0x`},
		{"0xg", Any, `invalid LID or GUID "0xg": want only hex digits after 0x`},
		{"0x-1", Any, `invalid LID or GUID "0x-1": want only hex digits after 0x`},
		{"0x1a:2", Any, `invalid GUID or GID "0x1a:2": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		// GUIDs.
		{"0x10002c90300a1b2c4", Any, `invalid GUID "0x10002c90300a1b2c4": more than 16 hex digits`},
		{"0x00000000000000001", Any, `invalid GUID "0x00000000000000001": more than 16 hex digits`},
		{"0x0000000000000000", Any, `invalid GUID "0x0000000000000000": GUID 0 addresses no port`},
		{"0:0:0:0", Any, `invalid GUID "0:0:0:0": GUID 0 addresses no port`},
		{"0002:c903:00a1:b2c4:1", Any, `invalid GUID or GID "0002:c903:00a1:b2c4:1": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		{"00002:c903:00a1:b2c4", Any, `invalid GUID or GID "00002:c903:00a1:b2c4": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		{"0002:c903:00a1:", Any, `invalid GUID or GID "0002:c903:00a1:": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		// GIDs.
		{"::", Any, `invalid GID "::": the zero GID addresses no port`},
		{"fe80::/", Any, `invalid GUID or GID "fe80::/": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		{"fe80::1x", Any, `invalid GUID or GID "fe80::1x": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		{"fe80:::1", Any, `invalid GUID or GID "fe80:::1": want a port GUID as four groups of hex digits (0002:c903:00a1:b2c4) or a GID in IPv6 notation (fe80::2:c903:a1:b2c4)`},
		// Scoped GIDs.
		{"::1%", Any, `invalid scoped GID "::1%": want a local end port such as mlx5_0/1 after %`},
		{"%mlx5_0", Any, `invalid scoped GID "%mlx5_0": want a GID such as fe80::2:c903:a1:b2c4 before %`},
		{"12%mlx5_0", Any, `invalid scoped GID "12%mlx5_0": want a GID such as fe80::2:c903:a1:b2c4 before %`},
		{"::%mlx5_0", Any, `invalid scoped GID "::%mlx5_0": the zero GID addresses no port`},
		{"fe80::1%%", Any, `invalid scoped GID "fe80::1%%": more than one %`},
		{"fe80::1%mlx5_0%1", Any, `invalid scoped GID "fe80::1%mlx5_0%1": more than one %`},
		{"fe80::1%mlx5_0/x", Any, `invalid scoped GID "fe80::1%mlx5_0/x": after %: want a decimal port number after /`},
		{"fe80::1%mlx5_0/", Any, `invalid scoped GID "fe80::1%mlx5_0/": after %: want a decimal port number after /`},
		{"fe80::1%mlx5_0/256", Any, `invalid scoped GID "fe80::1%mlx5_0/256": after %: port number out of range 0 to 255`},
		{"fe80::1%mlx5_0/1/2", Any, `invalid scoped GID "fe80::1%mlx5_0/1/2": after %: want a decimal port number after /`},
		{"fe80::1%/1", Any, `invalid scoped GID "fe80::1%/1": after %: empty device name`},
		{"fe80::1%m@x", Any, `invalid scoped GID "fe80::1%m@x": after %: device name has '@'; want A-Z a-z 0-9 _ . -`},
		{"fe80::1%..", Any, `invalid scoped GID "fe80::1%..": after %: a device name starts with a letter`},
		{"fe80::1%" + strings.Repeat("m", 64), Any, `invalid scoped GID "fe80::1%` + strings.Repeat("m", 64) + `": after %: device name longer than 63 characters`},
		{"fe80::1%1", Any, `invalid scoped GID "fe80::1%1": after %: a port number alone names no device; want a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)`},
		{"fe80::1%0xzz", Any, `invalid scoped GID "fe80::1%0xzz": after %: want 0x and 1 to 16 hex digits for a port GUID`},
		{"fe80::1%mlx5 0", Any, `invalid target "fe80::1%mlx5 0": contains whitespace; ` + anyForms},
		// DR paths.
		{"0,256", Any, `invalid DR path "0,256": entry 1 is 256; a port number is 0 to 255`},
		{"0,1,99999999999999999999", Any, `invalid DR path "0,1,99999999999999999999": entry 2 is 99999999999999999999; a port number is 0 to 255`},
		{"1,2", Any, `invalid DR path "1,2": must start with 0, the local port (did you mean 0,1,2?)`},
		{"0,1,3,,", Any, `invalid DR path "0,1,3,,": empty entry 3; ` + drForm},
		{",", Any, `invalid DR path ",": no port numbers; ` + drForm},
		{",0,1", Any, `invalid DR path ",0,1": empty entry 0; ` + drForm},
		{"0,,1", Any, `invalid DR path "0,,1": empty entry 1; ` + drForm},
		{"0,-1", Any, `invalid DR path "0,-1": entry 1 "-1" is not a decimal port number`},
		{"0,0x1", Any, `invalid DR path "0,0x1": entry 1 "0x1" is not a decimal port number`},
		{"0,1 ,3", Any, `invalid target "0,1 ,3": contains whitespace; ` + anyForms},
		{"0,1, 3", DirectRoute, `invalid DR path "0,1, 3": contains whitespace; want a DR path (0,1,3; 0 is the local port)`},
		{long, Any, `invalid DR path "` + long + `": 64 hops; at most 63 fit in an SMP`},
		// Legacy flags only assert.
		{"12", GUID, `-G given but "12" is a LID; a GUID is 0x and more than 4 hex digits, or 0002:c903:00a1:b2c4`},
		{"0x1a", GUID, `-G given but "0x1a" is a LID; a GUID has more than 4 hex digits: 0x000000000000001a`},
		{"fe80::1", GUID, `-G given but "fe80::1" is a GID`},
		{"0,1", GUID, `-G given but "0,1" is a DR path`},
		{"12", DirectRoute, `-D given but "12" is a LID`},
		{"0x0002c90300a1b2c4", DirectRoute, `-D given but "0x0002c90300a1b2c4" is a GUID`},
		{"IBPath(DLID=12)", DirectRoute, `-D given but "IBPath(DLID=12)" is a path spec`},
		{"0x0002c90300a1b2c4", LID, `-L given but "0x0002c90300a1b2c4" is a GUID`},
		{"0,1,3", LID, `-L given but "0,1,3" is a DR path`},
		{"0", LID, `-L given but "0" is a DR path (the local port); LID 0 is reserved`},
		{"IBDRPath(DLID=6, drPath=0:1:)", LID, `-L given but "IBDRPath(DLID=6, drPath=0:1:)" is a path spec`},
		{"IBPath(DLID=0, DGID=fe80::1)", LID, `-L given but "IBPath(DLID=0, DGID=fe80::1)" is a path spec`},
		{"12", GID, `want a GID but "12" is a LID`},
		{"fe80::1%mlx5_0", GID, `want a GID but "fe80::1%mlx5_0" is a scoped GID`},
	}
	for _, tt := range tests {
		t.Run(tt.want.String()+"/"+tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in, tt.want)
			if err == nil {
				t.Fatalf("ParseTarget(%q, %v) = %v, want an error", tt.in, tt.want, got)
			}
			if diff := cmp.Diff(tt.err, err.Error()); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			var pe *rdma.ParseError
			var me *MismatchError
			if !errors.As(err, &pe) && !errors.As(err, &me) {
				t.Errorf("error is %T, want *rdma.ParseError or *MismatchError", err)
			}
			if strings.ContainsRune(err.Error(), '\n') {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestParseTargetAssert checks which kinds each legacy flag lets through.
func TestParseTargetAssert(t *testing.T) {
	tests := []struct {
		in   string
		pass []Kind // besides Any
	}{
		{"12", []Kind{LID}},
		{"0x0002c90300a1b2c4", []Kind{GUID}},
		{"fe80::1", []Kind{GID}},
		{"fe80::1%mlx5_0/1", []Kind{ScopedGID}},
		{"0", []Kind{DirectRoute}},
		{"0,1", []Kind{DirectRoute}},
		// python-rdma: -L wants a DLID, -D an IBDRPath.
		{"IBPath(DLID=12)", []Kind{LID, FullPath}},
		{"IBPath(DGID=fe80::1)", []Kind{FullPath}},
		{"IBDRPath(drPath=0:1:)", []Kind{DirectRoute, FullPath}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []Kind
			for k := Any; k <= FullPath; k++ {
				_, err := ParseTarget(tt.in, k)
				var me *MismatchError
				switch {
				case err == nil:
					if k != Any {
						got = append(got, k)
					}
				case !errors.As(err, &me):
					t.Errorf("ParseTarget(%q, %v): %v, want a *MismatchError", tt.in, k, err)
				}
			}
			if diff := cmp.Diff(tt.pass, got); diff != "" {
				t.Errorf("unexpected kinds let through (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	var got []string
	for k := Any; k <= FullPath+1; k++ {
		got = append(got, k.String())
	}
	want := []string{"any", "LID", "GUID", "GID", "scoped GID", "DR path", "path spec", "Kind(7)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}
