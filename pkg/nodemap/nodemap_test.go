package nodemap

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	in := `# a map
0x0002c90300a1b2c4 "node17 HCA-1"
   0x200001	"Switch 2"   # the leaf
0x200002 spine # unquoted: up to the #
32 "decimal"

0x300000 ""
0X10 "upper"
`
	m, err := Parse(strings.NewReader(in), "map")
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{0x0002c90300a1b2c4: "node17 HCA-1", 0x200001: "Switch 2", 0x200002: "spine ", 32: "decimal", 0x10: "upper"}
	if diff := cmp.Diff(want, m.names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if got := m.Name(0x200001, "x"); got != "Switch 2" {
		t.Errorf("Name = %q", got)
	}
	if got := m.Name(0x999, "Hca1\x01\x7f x"); got != "Hca1   x" {
		t.Errorf("unmapped Name = %q", got)
	}
	var nilMap *Map
	if got := nilMap.Name(1, "desc"); got != "desc" || nilMap.Len() != 0 {
		t.Errorf("nil map: %q, %d", got, nilMap.Len())
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"zz \"x\"\n", "0x12z \"x\"\n", "0x \"x\"\n", "0x11112222333344445 \"x\"\n"} {
		_, err := Parse(strings.NewReader("# ok\n"+in), "m")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "m:2: want a GUID and a name") {
			t.Errorf("Parse(%q) = %v", in, err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "map")
	if err := os.WriteFile(p, []byte("0x1 \"one\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(p)
	if err != nil || m.Name(1, "") != "one" {
		t.Fatalf("Load: %v, %v", m, err)
	}
	if _, err := Load(filepath.Join(dir, "nosuch")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing named map: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("0x1 \"one\"\n# c\n2 two # x\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Parse(strings.NewReader(s), "f")
		if err == nil && m.Len() > strings.Count(s, "\n")+1 {
			t.Fatalf("%d names from %d lines", m.Len(), strings.Count(s, "\n")+1)
		}
	})
}
