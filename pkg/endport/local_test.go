package endport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLocal(t *testing.T) {
	tests := []struct {
		in   string
		want Local
		str  string
	}{
		{"mlx5_0", Local{CA: "mlx5_0"}, "mlx5_0"},
		{"mlx5_0/1", Local{CA: "mlx5_0", Port: 1}, "mlx5_0/1"},
		{"mlx5_0/01", Local{CA: "mlx5_0", Port: 1}, "mlx5_0/1"}, // never octal
		{"mlx5_0/010", Local{CA: "mlx5_0", Port: 10}, "mlx5_0/10"},
		{"mlx5_0/0", Local{CA: "mlx5_0"}, "mlx5_0"},
		{"mlx5_0/255", Local{CA: "mlx5_0", Port: 255}, "mlx5_0/255"},
		{"ibp0s3.1-x", Local{CA: "ibp0s3.1-x"}, "ibp0s3.1-x"},
		{strings.Repeat("m", 63), Local{CA: strings.Repeat("m", 63)}, strings.Repeat("m", 63)},
		{"1", Local{Port: 1}, "1"},
		{"02", Local{Port: 2}, "2"},
		{"0x0002c90300a1b2c4", Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}, "0x0002c90300a1b2c4"},
		{"0x1a", Local{Kind: ByGUID, GUID: 0x1a}, "0x000000000000001a"}, // no LIDs here
		{"0002:c903:00a1:b2c4", Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}, "0x0002c90300a1b2c4"},
		{"fe80::2:c903:a1:b2c4", Local{Kind: ByGID, GID: mustGID(t, "fe80::2:c903:a1:b2c4")}, "fe80::2:c903:a1:b2c4"},
		{"0x0002c90300a1b2c3/1", Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3, Port: 1}, "0x0002c90300a1b2c3/1"},
		{"0002:c903:00a1:b2c3/02", Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3, Port: 2}, "0x0002c90300a1b2c3/2"},
		{"0X1A/0", Local{Kind: ByNodeGUID, GUID: 0x1a}, "0x000000000000001a/0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLocal(tt.in)
			if err != nil {
				t.Fatalf("ParseLocal(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected end port (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.str, got.String()); diff != "" {
				t.Errorf("unexpected String (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLocalErrors(t *testing.T) {
	const forms = "want a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)"
	tests := []struct{ in, err string }{
		{"", `invalid end port "": empty; ` + forms},
		{" mlx5_0", `invalid end port " mlx5_0": contains whitespace; ` + forms},
		{"mlx5_0 /1", `invalid end port "mlx5_0 /1": contains whitespace; ` + forms},
		{"0", `invalid end port "0": port 0 alone names no port; leave the end port out for the default`},
		{"256", `invalid end port "256": port number out of range 1 to 255`},
		{"-1", `invalid end port "-1": a device name starts with a letter`},
		{"_x", `invalid end port "_x": a device name starts with a letter`},
		{"mlx5_0/", `invalid end port "mlx5_0/": want a decimal port number after /`},
		{"mlx5_0/x", `invalid end port "mlx5_0/x": want a decimal port number after /`},
		{"mlx5_0/-1", `invalid end port "mlx5_0/-1": want a decimal port number after /`},
		{"mlx5_0/0x1", `invalid end port "mlx5_0/0x1": want a decimal port number after /`},
		{"mlx5_0/256", `invalid end port "mlx5_0/256": port number out of range 0 to 255`},
		{"mlx5_0/1/2", `invalid end port "mlx5_0/1/2": want a decimal port number after /`},
		{"/1", `invalid end port "/1": empty device name`},
		{"12/1", `invalid end port "12/1": a device name starts with a letter`},
		{".", `invalid end port ".": a device name starts with a letter`},
		{"../1", `invalid end port "../1": a device name starts with a letter`},
		{"mlx5%0", `invalid end port "mlx5%0": device name has '%'; want A-Z a-z 0-9 _ . -`},
		{"mlx5,0", `invalid end port "mlx5,0": device name has ','; want A-Z a-z 0-9 _ . -`},
		{"mlx\xff", `invalid end port "mlx\xff": device name has byte 0xff; want A-Z a-z 0-9 _ . -`},
		{strings.Repeat("m", 64), `invalid end port "` + strings.Repeat("m", 64) + `": device name longer than 63 characters`},
		{"0x", `invalid end port "0x": want 0x and 1 to 16 hex digits for a port GUID`},
		{"0xg", `invalid end port "0xg": want 0x and 1 to 16 hex digits for a port GUID`},
		{"0x10002c90300a1b2c4", `invalid end port "0x10002c90300a1b2c4": want 0x and 1 to 16 hex digits for a port GUID`},
		{"0x0", `invalid end port "0x0": GUID 0 names no port`},
		{"0:0:0:0", `invalid end port "0:0:0:0": GUID 0 names no port`},
		{"::", `invalid end port "::": the zero GID names no port`},
		{"fe80::1%mlx5_0", `invalid end port "fe80::1%mlx5_0": not a port GUID (0002:c903:00a1:b2c4) nor a GID (fe80::2:c903:a1:b2c4)`},
		{"mlx5_0:1", `invalid end port "mlx5_0:1": not a port GUID (0002:c903:00a1:b2c4) nor a GID (fe80::2:c903:a1:b2c4)`},
		{"0x12/", `invalid end port "0x12/": want a decimal port number after /`},
		{"0x12/0x1", `invalid end port "0x12/0x1": want a decimal port number after /`},
		{"0x12/256", `invalid end port "0x12/256": port number out of range 0 to 255`},
		{"0x12/1/2", `invalid end port "0x12/1/2": want a decimal port number after /`},
		{"0x0/1", `invalid end port "0x0/1": GUID 0 names no device`},
		{"0xzz/1", `invalid end port "0xzz/1": want a node GUID (0x0002c90300a1b2c3 or 0002:c903:00a1:b2c3) before /`},
		{"fe80::1/1", `invalid end port "fe80::1/1": want a node GUID (0x0002c90300a1b2c3 or 0002:c903:00a1:b2c3) before /`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLocal(tt.in)
			if diff := cmp.Diff(tt.err, errText(err)); diff != "" {
				t.Errorf("ParseLocal(%q) = %v: unexpected error (-want +got):\n%s", tt.in, got, diff)
			}
		})
	}
}

func TestFromFlags(t *testing.T) {
	tests := []struct {
		ca   string
		port int
		want Local
		str  string
		err  string
	}{
		{"", 0, Local{}, "", ""},
		{"", 2, Local{Port: 2}, "2", ""},
		{"mlx5_0", 0, Local{CA: "mlx5_0"}, "mlx5_0", ""},
		{"mlx5_0", 1, Local{CA: "mlx5_0", Port: 1}, "mlx5_0/1", ""},
		{"mlx5_0", 255, Local{CA: "mlx5_0", Port: 255}, "mlx5_0/255", ""},
		{"mlx5_0", 256, Local{}, "", `invalid port number "256": want 0 (the first usable port) to 255`},
		{"mlx5_0", -1, Local{}, "", `invalid port number "-1": want 0 (the first usable port) to 255`},
		{"mlx5/0", 1, Local{}, "", `invalid CA name "mlx5/0": device name has '/'; want A-Z a-z 0-9 _ . -`},
		{"0x12", 1, Local{Kind: ByNodeGUID, GUID: 0x12, Port: 1}, "0x0000000000000012/1", ""},
		{"0002:c903:00a1:b2c3", 0, Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3}, "0x0002c90300a1b2c3/0", ""},
		{"0x0", 1, Local{}, "", `invalid node GUID "0x0": GUID 0 names no device`},
		{"0x", 1, Local{}, "", `invalid node GUID "0x": want 0x and 1 to 16 hex digits or 0002:c903:00a1:b2c3 (or a device name, which starts with a letter)`},
		{"mlx5:0", 1, Local{}, "", `invalid node GUID "mlx5:0": want 0x and 1 to 16 hex digits or 0002:c903:00a1:b2c3 (or a device name, which starts with a letter)`},
		{"12", 1, Local{}, "", `invalid CA name "12": a device name starts with a letter`},
	}
	for _, tt := range tests {
		t.Run(tt.ca+"/"+tt.str, func(t *testing.T) {
			got, err := FromFlags(tt.ca, tt.port)
			if diff := cmp.Diff(tt.err, errText(err)); diff != "" {
				t.Fatalf("FromFlags(%q, %d): unexpected error (-want +got):\n%s", tt.ca, tt.port, diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected end port (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.str, got.String()); diff != "" {
				t.Errorf("unexpected String (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalJSON(t *testing.T) {
	type doc struct {
		Local Local `json:"local"`
	}
	for _, tt := range []struct {
		l    Local
		json string
	}{
		{Local{}, `{"local":""}`},
		{Local{CA: "mlx5_0", Port: 1}, `{"local":"mlx5_0/1"}`},
		{Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}, `{"local":"0x0002c90300a1b2c4"}`},
		{Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3}, `{"local":"0x0002c90300a1b2c3/0"}`},
	} {
		b, err := json.Marshal(doc{tt.l})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.json, string(b)); diff != "" {
			t.Errorf("unexpected JSON (-want +got):\n%s", diff)
		}
		var back doc
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("unmarshaling %s: %v", b, err)
		}
		if diff := cmp.Diff(tt.l, back.Local); diff != "" {
			t.Errorf("unexpected end port from %s (-want +got):\n%s", b, diff)
		}
	}
}

func TestLocalKindString(t *testing.T) {
	got := []string{ByName.String(), ByGUID.String(), ByGID.String(), ByNodeGUID.String(), LocalKind(4).String()}
	want := []string{"name", "port GUID", "port GID", "node GUID", "LocalKind(4)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}

// TestFromFlagArgs covers -C and -P as typed: infiniband-diags' device and
// port number, and python-rdma's node GUID for -C and end-port specs for
// -P.
func TestFromFlagArgs(t *testing.T) {
	tests := []struct {
		ca, port string
		want     Local
	}{
		{"", "", Local{}},
		{"mlx5_0", "", Local{CA: "mlx5_0"}},
		{"mlx5_0", "2", Local{CA: "mlx5_0", Port: 2}},
		{"mlx5_0", "010", Local{CA: "mlx5_0", Port: 10}}, // never octal
		{"mlx5_0", "0x10", Local{CA: "mlx5_0", Port: 16}},
		{"", "1", Local{Port: 1}},
		{"", "0", Local{}},
		{"", "0x0000000000000001", Local{Port: 1}}, // a port number first
		{"", "mlx5_0/1", Local{CA: "mlx5_0", Port: 1}},
		{"", "mlx5_0", Local{CA: "mlx5_0"}},
		{"", "0x0002c90300a1b2c4", Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}},
		{"", "0x00000000000001ab", Local{Kind: ByGUID, GUID: 0x1ab}},
		{"", "0002:c903:00a1:b2c4", Local{Kind: ByGUID, GUID: 0x0002c90300a1b2c4}},
		{"", "fe80::2:c903:a1:b2c4", Local{Kind: ByGID, GID: mustGID(t, "fe80::2:c903:a1:b2c4")}},
		{"", "0x0002c90300a1b2c3/1", Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3, Port: 1}},
		{"0x0002c90300a1b2c3", "", Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3}},
		{"0002:c903:00a1:b2c3", "1", Local{Kind: ByNodeGUID, GUID: 0x0002c90300a1b2c3, Port: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.ca+" "+tt.port, func(t *testing.T) {
			got, err := FromFlagArgs(tt.ca, tt.port)
			if err != nil {
				t.Fatalf("FromFlagArgs(%q, %q): %v", tt.ca, tt.port, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected end port (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromFlagArgsErrors(t *testing.T) {
	const forms = "want a port number (1, 0x1; 0 to 255), a device (mlx5_0), device/port (mlx5_0/1), port GUID (0x0002c90300a1b2c4, 0002:c903:00a1:b2c4) or port GID (fe80::2:c903:a1:b2c4)"
	const withCA = "-C names the device, so -P takes a port number; give an end port such as mlx5_0/1 or a port GUID with -P alone"
	tests := []struct{ ca, port, err string }{
		{"", "256", `invalid port number "256": out of range 0 to 255`},
		{"", "0x100", `invalid port number "0x100": out of range 0 to 255`},
		{"", "99999999999999999999", `invalid port number "99999999999999999999": out of range 0 to 255`},
		{"", "-1", `invalid port "-1": ` + forms},
		{"", "+1", `invalid port "+1": ` + forms},
		{"", "1.5", `invalid port "1.5": ` + forms},
		{"", "0x", `invalid port "0x": ` + forms},
		{"", "mlx5_0/x", `invalid port "mlx5_0/x": ` + forms},
		{"mlx5_0", "mlx5_0/1", `invalid port number "mlx5_0/1": ` + withCA},
		{"mlx5_0", "0x0002c90300a1b2c4", `invalid port number "0x0002c90300a1b2c4": ` + withCA},
		{"mlx5_0", "fe80::1", `invalid port number "fe80::1": ` + withCA},
		{"mlx5_0", "x/y", `invalid port number "x/y": want a decimal number or 0x and hex digits, 0 to 255`},
		{"mlx5_0", "256", `invalid port number "256": out of range 0 to 255`},
		{"0x0", "1", `invalid node GUID "0x0": GUID 0 names no device`},
		{"0mlx", "", `invalid CA name "0mlx": a device name starts with a letter`},
	}
	for _, tt := range tests {
		t.Run(tt.ca+" "+tt.port, func(t *testing.T) {
			got, err := FromFlagArgs(tt.ca, tt.port)
			if diff := cmp.Diff(tt.err, errText(err)); diff != "" {
				t.Errorf("FromFlagArgs(%q, %q) = %v: unexpected error (-want +got):\n%s", tt.ca, tt.port, got, diff)
			}
		})
	}
}
