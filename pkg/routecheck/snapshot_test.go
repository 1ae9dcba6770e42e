package routecheck

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// lineSnapshot is two switches in a line, S1 (LID 1) and S2 (LID 2),
// linked by their ports 2, with H1 (LID 3) on S1's port 1 and H2 (LID 4)
// on S2's port 1; s1LFT is S1's table from LID 0, S2 routes by min hop.
func lineSnapshot(s1LFT []uint8) *Snapshot {
	sw := func(guid uint64, lid, port int, desc string) LinkEnd {
		return LinkEnd{Type: Switch, NumPorts: 8, SystemGUID: guid, NodeGUID: guid, PortGUID: guid, VendorID: 0x2c9, DeviceID: 0xb924, Revision: 0xa1, Desc: desc, LID: lid, Port: port}
	}
	ca := func(guid uint64, lid int, desc string) LinkEnd {
		return LinkEnd{Type: CA, NumPorts: 1, SystemGUID: guid, NodeGUID: guid, PortGUID: guid + 1, VendorID: 0x2c9, Desc: desc, LID: lid, Port: 1}
	}
	s1p1, s1p2 := sw(0x200000, 1, 1, "S1"), sw(0x200000, 1, 2, "S1")
	s2p1, s2p2 := sw(0x200001, 2, 1, "S2"), sw(0x200001, 2, 2, "S2")
	h1, h2 := ca(0x100000, 3, "H1"), ca(0x100002, 4, "H2")
	h1.SM = true
	link := func(a, b LinkEnd) Link { return Link{A: a, B: b, Width: "4x", State: "ACT", Speed: "2.5"} }
	return &Snapshot{
		Links: []Link{link(h1, s1p1), link(s1p1, h1), link(s1p2, s2p2), link(h2, s2p1), link(s2p1, h2), link(s2p2, s1p2)},
		Switches: []SwitchFDB{
			{GUID: 0x200000, LFT: s1LFT, MFT: map[uint16][]int{0xc001: {1, 2}}},
			{GUID: 0x200001, LFT: []uint8{Unassigned, 2, 0, 2, 1}, MFT: map[uint16][]int{0xc001: {1, 2}}},
		},
	}
}

func TestSnapshotWriteFDBs(t *testing.T) {
	tests := []struct {
		name string
		lft  []uint8
		want string // S1's lines from LID 1
	}{
		{"min hop", []uint8{Unassigned, 0, 2, 1, 2},
			"0x0001 : 000  : 00   : yes\n0x0002 : 002  : 01   : yes\n0x0003 : 001  : 01   : yes\n0x0004 : 002  : 02   : yes\n"},
		{"unrouted, no link, past the LIDs", []uint8{Unassigned, 0, Unassigned, 1, 5, 1},
			"0x0001 : 000  : 00   : yes\n0x0002 : UNREACHABLE\n0x0003 : 001  : 01   : yes\n0x0004 : 005  : HOPS UNKNOWN\n0x0005 : UNREACHABLE\n"},
		{"a detour", []uint8{Unassigned, 0, 1, 1, 2},
			"0x0001 : 000  : 00   : yes\n0x0002 : 001  : HOPS UNKNOWN\n0x0003 : 001  : 01   : yes\n0x0004 : 002  : 02   : yes\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := lineSnapshot(tc.lft).WriteFDBs(&b); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			head := "dump_ucast_routes: Switch 0x0000000000200000\nLID    : Port : Hops : Optimal\n"
			s1 := strings.TrimPrefix(got[:strings.Index(got, "dump_ucast_routes: Switch 0x0000000000200001")], head)
			if diff := cmp.Diff(tc.want, s1); diff != "" {
				t.Errorf("unexpected S1 table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSnapshotWriteSubnetAndMCFDBs(t *testing.T) {
	s := lineSnapshot([]uint8{Unassigned, 0, 2, 1, 2})
	var b bytes.Buffer
	if err := s.WriteSubnet(&b); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitAfter(b.String(), "\n")[0]
	want := "{ CA-SM Ports:01 SystemGUID:0000000000100000 NodeGUID:0000000000100000 PortGUID:0000000000100001 VenID:0002C9 DevID:0000 Rev:00000000 {H1} LID:0003 PN:01 } " +
		"{ SW Ports:08 SystemGUID:0000000000200000 NodeGUID:0000000000200000 PortGUID:0000000000200000 VenID:000002C9 DevID:B924 Rev:000000A1 {S1} LID:0001 PN:01 } PHY=4x LOG=ACT SPD=2.5\n"
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("unexpected first line (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := s.WriteMCFDBs(&b); err != nil {
		t.Fatal(err)
	}
	want = "\nSwitch 0x0000000000200000\nLID    : Out Port(s)\n0xC001 : 0x001  0x002 \n\nSwitch 0x0000000000200001\nLID    : Out Port(s)\n0xC001 : 0x001  0x002 \n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("unexpected opensm.mcfdbs (-want +got):\n%s", diff)
	}
}

// TestSnapshotRoundTrip builds the model from a snapshot and from the
// dumps it writes (with its path SLs and SL2VL tables) and wants the same
// counts and the same report.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, lft := range [][]uint8{{Unassigned, 0, 2, 1, 2}, {Unassigned, 0, Unassigned, 1, 5, 1}} {
		s := lineSnapshot(lft)
		s.PathSLs = []PathSL{{Source: 0x100000, DLID: 4, SL: 1}, {Source: 0x100002, DLID: 3, SL: 0}}
		for _, sw := range []uint64{0x200000, 0x200001} {
			s.SL2VL = append(s.SL2VL, SL2VLEntry{Switch: sw, In: 1, Out: 2, VLs: [16]uint8{0, 1, 2, 3}}, SL2VLEntry{Switch: sw, In: 2, Out: 1, VLs: [16]uint8{0, 1, 2, 3}})
		}
		live, counts, err := s.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		dump := New(0)
		var got LoadCounts
		var b bytes.Buffer
		steps := []struct {
			write func(*bytes.Buffer) error
			read  func() error
		}{
			{func(b *bytes.Buffer) error { return s.WriteSubnet(b) }, func() (err error) { got.Links, err = ReadSubnet(dump, &b, "lst"); return }},
			{func(b *bytes.Buffer) error { return s.WriteFDBs(b) }, func() (err error) { got.FDBEntries, got.FDBSwitches, err = ReadFDBs(dump, &b, "fdbs"); return }},
			{func(b *bytes.Buffer) error { return s.WriteMCFDBs(b) }, func() (err error) { got.MFTEntries, got.MFTSwitches, err = ReadMCFDBs(dump, &b, "mcfdbs"); return }},
			{func(b *bytes.Buffer) error { return s.WritePathSLs(b) }, func() error { _, err := ReadPathSLs(dump, &b, "psl"); return err }},
			{func(b *bytes.Buffer) error { return s.WriteSL2VL(b) }, func() error { _, err := ReadSL2VL(dump, &b, "slvl"); return err }},
		}
		for _, st := range steps {
			b.Reset()
			if err := st.write(&b); err != nil {
				t.Fatal(err)
			}
			if err := st.read(); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff(counts, got); diff != "" {
			t.Errorf("unexpected counts (-snapshot +dumps):\n%s", diff)
		}
		want, err := Check(dump, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Check(live, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, rep); diff != "" {
			t.Errorf("unexpected report (-dumps +snapshot):\n%s", diff)
		}
		if live.NumSLs() != 2 || live.NumVLs() != 4 {
			t.Errorf("%d SLs, %d VLs; want 2 and 4", live.NumSLs(), live.NumVLs())
		}
	}
}

func TestSnapshotNoLinks(t *testing.T) {
	s := lineSnapshot(nil)
	for i := range s.Links {
		s.Links[i].State = "DWN"
	}
	if _, _, err := s.Fabric(); err == nil || !strings.Contains(err.Error(), "no active links") {
		t.Errorf("error %v, want no active links", err)
	}
}
