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
	attrs, err := parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(attrs)
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
		{"X 0 8 uint X", "1: field before the first attr line"},
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
	}
	for _, tt := range tests {
		_, err := parse(tt.src)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("parse(%q) = %v, want %q...", tt.src, err, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	attrs, err := parse("# comment\nattr Demo pma 0x12 # trailing\nLID 16 16 uint Lid\nState 32 4 portstate - type=uint8 dump=36\nGID 64 128 array GID type=rdma.GID\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []*attr{{Name: "Demo", Class: "ClassPerf", ID: 0x12, line: 2, Fields: []field{
		{Name: "LID", Offset: 16, Width: 16, Format: "uint", Label: "Lid", Type: "uint16", Dump: 16, line: 3},
		{Name: "State", Offset: 32, Width: 4, Format: "portstate", Type: "uint8", Dump: 36, line: 4},
		{Name: "GID", Offset: 64, Width: 128, Format: "array", Label: "GID", Type: "rdma.GID", Dump: 64, line: 5},
	}}}
	if diff := cmp.Diff(want, attrs, cmp.AllowUnexported(attr{}, field{})); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	if got := attrs[0].size(); got != 24 {
		t.Errorf("size = %d, want 24", got)
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
