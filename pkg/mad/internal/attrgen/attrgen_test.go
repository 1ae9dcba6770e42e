package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratedUpToDate fails when attributes.tbl changed and go generate
// was not run.
func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("../../attributes.tbl")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(tab)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../attrs_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("pkg/mad/attrs_gen.go is stale: run go generate ./pkg/mad")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"X 0 8 uint X", "1: field outside an attr"},
		{"attr A smp", "1: want: attr <Name> <class> <ID|->"},
		{"attr a smp 1\nX 0 8 uint X", "1: attribute name \"a\" is not an exported Go name"},
		{"attr A xyz 1", "1: unknown class \"xyz\""},
		{"attr A smp 0x10000", "1: attribute ID \"0x10000\""},
		{"attr A smp 1", "1: attribute A has no fields"},
		{"attr A smp 1\nX 0 8 uint X\nattr A smp 2\nY 0 8 uint Y", "3: attribute A defined twice"},
		{"attr A smp 1\nX 0 8", "2: want: <GoName>"},
		{"attr A smp 1\nX -1 8 uint X", "2: offset \"-1\""},
		{"attr A smp 1\nX 0 0 uint X", "2: width \"0\""},
		{"attr A smp 1\nX 0 8 nosuch X", "2: unknown format \"nosuch\""},
		{"attr A smp 1\nX 0 8 uint X bad=1", "2: unknown option \"bad=1\""},
		{"attr A smp 1\nX 0 8 uint X dump=x", "2: dump offset \"x\""},
		{"attr A smp 1\nX 4 72 array X", "2: X: fields wider than 64 bits must be whole bytes"},
		{"attr A smp 1\nX 4 64 uint X", "2: X spans more than 8 bytes"},
		{"attr A smp 1\nX 0 8 uint X\nX 8 8 uint X", "3: A.X defined twice"},
		{"attr A smp 1\nX 0 8 uint X\nY 4 8 uint Y", "3: A.Y overlaps X"},
		{"attr A smp 1 size=x\nX 0 8 uint X", "1: size \"x\""},
		{"attr A smp 1 bogus\nX 0 8 uint X", "1: unknown option \"bogus\""},
		{"attr A smp 1 size=1\nX 0 16 uint X", "1: A: size=1, but its fields run to byte 2"},
		{"attr A smp 1\nX 0 8 uint X comp=64", "2: comp=64: want component bits 0 to 63"},
		{"attr A smp 1\nX 0 8 uint X comp=1,", "2: comp=1,: want component bits 0 to 63"},
		{"attr A smp 1\nX 0 8 uint X alias=1x", "2: alias \"1x\" is not a member name"},
		{"attr A smp 1\nX 0 8 uint X comp=0\nY 8 8 uint Y", "1: A: comp= on some fields but not all"},
		{"attr A sa 1\nX 0 8 uint X", "1: A: every field of an SA attribute needs comp="},
		{"attr B sa 2\nA 0 8 attr A", "2: A: an embedded attribute needs comp=BASE"},
		{"attr B cc 2\nE 0 16 block E", "2: E: a block needs count=N"},
		{"attr B cc 2\nE 0 24 block E count=2", "2: E: a block needs count=N"},
		{"attr B cc 2\nE 4 16 block E count=2", "2: E: a block must be whole bytes"},
		{"attr B cc 2\nE 0 16 block E count=2 type=x", "2: E: a block takes only count="},
		{"attr B cc 2\nX 0 8 uint X count=2", "2: X: count= is for blocks"},
		{"attr B cc 2\nE 0 16 block E count=2", "2: B.E: no attribute E"},
		{"attr E cc 3\nX 0 8 uint X\nattr B cc 2\nE 0 16 block E count=2", "4: B.E: E is not an element of its class"},
		{"attr E smp -\nX 0 8 uint X\nattr B cc 2\nE 0 16 block E count=2", "4: B.E: E is not an element of its class"},
		{"attr E cc -\nX 0 16 uint X\nattr B cc 2\nE 0 16 block E count=2", "4: B.E: 2 elements of 2 bytes are not 16 bits"},
		{"attr E cc -\nX 0 8 uint X\nattr B cc 2\nE 0 16 block E count=2\nF 16 16 block E count=2", "5: B: more than one block"},
		{"attr B sa 2\nA 4 8 attr A comp=0", "2: A: an embedded attribute must be whole bytes"},
		{"attr B sa 2\nA 0 8 attr A comp=0 type=x", "2: A: an embedded attribute takes no type= or dump="},
		{"attr B sa 2\nA 0 8 attr Nosuch comp=0", "2: B.A: no attribute Nosuch"},
		{"attr A smp 1\nX 0 8 uint X\nattr B smp 2\nA 0 8 attr A comp=0", "4: B.A: only SA attributes (class sa) embed attributes"},
		{"attr A smp 1\nX 0 8 uint X\nattr B sa 2\nA 0 16 attr A comp=0", "4: B.A: A is 8 bits, not 16"},
		{"attr A sa 1\nX 0 8 uint X comp=0\nattr B sa 2\nA 0 8 attr A comp=0\nattr C sa 3\nB 0 8 attr B comp=0", "6: C.B: B embeds attributes itself"},
		{"attr A smp 1\nX 0 8 uint X alias=y\nY 8 8 uint Y\nattr B sa 2\nA 0 16 attr A comp=0", "5: B: member name \"a.y\" of A.Y is also A.X's"},
		{"attr A smp 1\nX 0 8 uint X comp=10\nattr B sa 2\nA 0 8 attr A comp=60", "4: B.A.X: component bits past 63"},
		{"enum E", "1: want: enum <Type> <format>"},
		{"enum e mtu", "1: enum name \"e\" is not an exported Go name"},
		{"enum E nosuch", "1: unknown format \"nosuch\""},
		{"enum E mtu A", "1: \"A\": want <Name>=<value> or set=<Enum>"},
		{"enum E mtu A-B=1", "1: value name \"A-B\""},
		{"enum E mtu A=256", "1: A=256: want an 8-bit number"},
		{"enum E mtu\nenum E vlcap", "2: enum E defined twice"},
		{"enum E mtu\nenum F mtu", "2: format mtu already has enum E"},
		{"enum E linkwidthen set=W", "1: E: set=W names no enum of single values"},
		{"attr A smp 1\nX 0 8 uint X\nenum E mtu\nY 8 8 uint Y", "4: field outside an attr"},
	}
	for _, tt := range tests {
		_, err := parse(tt.src)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("parse(%q) = %v, want %q...", tt.src, err, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tab, err := parse("# comment\nattr Demo pma 0x12 # trailing\nLID 16 16 uint Lid\nState 32 4 portstate - type=uint8 dump=36\nGID 64 128 array GID type=rdma.GID\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []*attr{{Name: "Demo", Class: "ClassPerf", ID: 0x12, line: 2, Fields: []field{
		{Name: "LID", Offset: 16, Width: 16, Format: "uint", Label: "Lid", Type: "uint16", Dump: 16, line: 3},
		{Name: "State", Offset: 32, Width: 4, Format: "portstate", Type: "uint8", Dump: 36, typed: true, line: 4},
		{Name: "GID", Offset: 64, Width: 128, Format: "array", Label: "GID", Type: "rdma.GID", Dump: 64, typed: true, line: 5},
	}}}
	attrs := tab.Attrs
	if diff := cmp.Diff(want, attrs, cmp.AllowUnexported(attr{}, field{})); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	if got := attrs[0].size(); got != 24 {
		t.Errorf("size = %d, want 24", got)
	}
}

// TestParseRecord reads an SA record that embeds an attribute and checks
// the flattened fields: names, offsets, component bits and member names.
func TestParseRecord(t *testing.T) {
	tab, err := parse("attr E smp -\nB 8 8 uint B alias=bee\nA 0 8 uint A\n" +
		"attr R sa 0x11 size=5 const=no\nServiceID 0 16 hex - comp=0,1\nE 16 16 attr E comp=3 alias=elem\n")
	if err != nil {
		t.Fatal(err)
	}
	attrs := tab.Attrs
	r := attrs[1]
	if r.Class != "ClassSA" || r.Size != 5 || !r.NoConst || r.size() != 5 {
		t.Errorf("R: class %s, size= %d, const=no %v, size() %d", r.Class, r.Size, r.NoConst, r.size())
	}
	if got, want := r.Fields[1], (field{Name: "E", Offset: 16, Width: 16, Format: "attr", Type: "E", Dump: 16, Embed: "E", Comp: []int{3}, Alias: "elem", line: 6}); !cmp.Equal(want, got, cmp.AllowUnexported(field{})) {
		t.Errorf("embedding field (-want +got):\n%s", cmp.Diff(want, got, cmp.AllowUnexported(field{})))
	}
	flat, err := flatten(r, attrsByName(attrs))
	if err != nil {
		t.Fatal(err)
	}
	want := []flatField{
		{Name: "ServiceID", JSON: "serviceID", Offset: 0, Width: 16, Dump: 0, Format: "hex", Member: "serviceID",
			Names: []string{"serviceid"}, Mask: 0x3, Kind: "kindUint", line: 5},
		// E's fields in table order; their bits count from 3 in offset order.
		{Name: "E.B", JSON: "e.b", Label: "B", Offset: 24, Width: 8, Dump: 24, Format: "uint", Member: "elem.bee",
			Names: []string{"e.b", "e.bee", "elem.b", "elem.bee"}, Mask: 1 << 4, Kind: "kindUint", line: 6},
		{Name: "E.A", JSON: "e.a", Label: "A", Offset: 16, Width: 8, Dump: 16, Format: "uint", Member: "elem.a",
			Names: []string{"e.a", "elem.a"}, Mask: 1 << 3, Kind: "kindUint", line: 6},
	}
	if diff := cmp.Diff(want, flat, cmp.AllowUnexported(flatField{})); diff != "" {
		t.Errorf("flatten (-want +got):\n%s", diff)
	}
	if _, err := generate(tab); err != nil {
		t.Errorf("generate: %v", err)
	}
}

func TestMember(t *testing.T) {
	for in, want := range map[string]string{
		"LID": "LID", "NodeGUID": "nodeGUID", "MKey": "MKey", "ServiceData8_0": "serviceData8_0", "X": "x", "QOSClass": "QOSClass",
	} {
		if got := member(field{Name: in}); got != want {
			t.Errorf("member(%q) = %q, want %q", in, got, want)
		}
	}
	if got := member(field{Name: "SMLID", Alias: "masterSMLID"}); got != "masterSMLID" {
		t.Errorf("member with alias = %q", got)
	}
}

func TestJSONName(t *testing.T) {
	for in, want := range map[string]string{
		"LID": "lid", "GUIDCap": "guidCap", "MKey": "mKey", "NodeGUID": "nodeGUID",
		"PortXmitData": "portXmitData", "VL15Dropped": "vl15Dropped", "QP1Dropped": "qp1Dropped", "X": "x",
	} {
		if got := jsonName(in); got != want {
			t.Errorf("jsonName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseEnums checks that a field of an enum's format gets the enum's
// type unless it is wider than 8 bits or says type=.
func TestParseEnums(t *testing.T) {
	tab, err := parse("enum W linkwidth A=1 B=2\nenum S linkwidthen set=W\n" +
		"attr X smp 1\nW 0 8 linkwidth W\nS 8 8 linkwidthen S\nT 16 8 linkwidth T type=uint8\nU 24 24 linkwidthen U\n")
	if err != nil {
		t.Fatal(err)
	}
	wantEnums := []*enum{
		{Name: "W", Format: "linkwidth", Values: []enumValue{{"A", 1}, {"B", 2}}, Fields: []string{"X.W"}, line: 1},
		{Name: "S", Format: "linkwidthen", Of: "W", Fields: []string{"X.S"}, line: 2},
	}
	if diff := cmp.Diff(wantEnums, tab.Enums, cmp.AllowUnexported(enum{})); diff != "" {
		t.Errorf("enums (-want +got):\n%s", diff)
	}
	var got []string
	for _, f := range tab.Attrs[0].Fields {
		got = append(got, f.Name+" "+f.Type)
	}
	if diff := cmp.Diff([]string{"W W", "S S", "T uint8", "U uint32"}, got); diff != "" {
		t.Errorf("field types (-want +got):\n%s", diff)
	}
	out, err := generate(tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"type W uint8", "WA W = 1", "func (v W) String() string { return FormatLinkWidth.Text(uint32(v)) }",
		"func (v S) Has(w W) bool", "a.W = W(data[0])"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("generated code lacks %q", want)
		}
	}
}
