package ibdiagconf

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shipped is rdma-core 44's infiniband-diags/etc/ibdiag.conf, every key
// commented out.
const shipped = `# Define different defaults for all infiniband-diag tools.  These can be
# defined on the command line but this offers a more global config.

# Defaults are to find the first port with Physical state == "LinkUp"
#CA=mlx4_0

#Port=1
#timeout=50
#MLX_EPI=false
#m_key=0x00
#sa_key=0x00
`

// view is what a test compares: the settings and the keys set.
type view struct {
	CA        string
	Port      int
	TimeoutMS int
	MLXEPI    bool
	MKey      uint64
	SAKey     uint64
	NDFormat  string
	Set       []string
}

func viewOf(s *Settings) view {
	v := view{CA: s.CA, Port: s.Port, TimeoutMS: s.TimeoutMS, MLXEPI: s.MLXEPI, MKey: s.MKey, SAKey: s.SAKey, NDFormat: s.NDFormat}
	for _, k := range keys {
		if s.Has(k) {
			v.Set = append(v.Set, k.String())
		}
	}
	return v
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want view
	}{
		{"shipped file sets nothing", shipped, view{}},
		{"empty", "", view{}},
		{"every key", "CA=mlx5_0\nPort=2\ntimeout=50\nMLX_EPI=false\nm_key=0x1234\nsa_key=0x00\nnd_format=x\n",
			view{CA: "mlx5_0", Port: 2, TimeoutMS: 50, MKey: 0x1234, NDFormat: "x",
				Set: []string{"CA", "Port", "timeout", "MLX_EPI", "m_key", "sa_key", "nd_format"}}},
		{"no final newline", "Port=1", view{Port: 1, Set: []string{"Port"}}},
		{"blanks around = and value", "CA = mlx5_1 \ntimeout =\t100\n", view{CA: "mlx5_1", TimeoutMS: 100, Set: []string{"CA", "timeout"}}},
		{"CRLF", "Port=1\r\n", view{Port: 1, Set: []string{"Port"}}},
		{"blank lines", "\n   \n\t\nPort=1\n", view{Port: 1, Set: []string{"Port"}}},
		{"indented comment", "  # CA=mlx5_0\n", view{}},
		{"later line wins", "Port=1\nPort=2\n", view{Port: 2, Set: []string{"Port"}}},
		{"unknown keys ignored", "foo=bar\nca=mlx5_0\nPORT=3\n", view{}},
		{"value with =", "nd_format=a=b\n", view{NDFormat: "a=b", Set: []string{"nd_format"}}},
		{"hex", "m_key=0XFFFFFFFFFFFFFFFF\nPort=0xff\n", view{MKey: 1<<64 - 1, Port: 255, Set: []string{"Port", "m_key"}}},
		{"zero", "timeout=0\nPort=0\n", view{Set: []string{"Port", "timeout"}}},
		{"TRUE", "MLX_EPI=TRUE\n", view{MLXEPI: true, Set: []string{"MLX_EPI"}}},
		{"true", "MLX_EPI=true\n", view{MLXEPI: true, Set: []string{"MLX_EPI"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Settings
			if err := s.Parse(strings.NewReader(tt.text), "f.conf"); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, viewOf(&s)); diff != "" {
				t.Errorf("unexpected settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		text    string
		wantErr string
	}{
		{"CA\n", `f.conf:1: want KEY=VALUE, got "CA"`},
		{"# c\nPort=1\nPort=\n", "f.conf:3: Port has no value"},
		{"CA= \n", "f.conf:1: CA has no value"},
		{"=CA=x\n", `f.conf:1: no key before '='`},
		{" CA=mlx5_0\n", "f.conf:1: blanks before the key"},
		{"CAx=mlx5_0\n", `f.conf:1: unknown key "CAx": infiniband-diags reads it as CA`},
		{"timeout_ms=5\n", `unknown key "timeout_ms": infiniband-diags reads it as timeout`},
		{"Port=256\n", "f.conf:1: Port=256: out of range 0 to 255"},
		{"Port=-1\n", "Port=-1: want a decimal number"},
		{"Port=1x\n", "Port=1x: want a decimal number"},
		{"Port=010\n", "Port=010: a leading 0 makes it octal"},
		{"Port=0x\n", "Port=0x: want a decimal number"},
		{"timeout=2147483648\n", "out of range 0 to 2147483647"},
		{"m_key=0x10000000000000000\n", "out of range"},
		{"sa_key=+1\n", "want a decimal number"},
		{"MLX_EPI=True\n", "MLX_EPI=True: want true or false"},
		{"MLX_EPI=1\n", "want true or false"},
		{"CA=mlx5 0\n", "a CA name has no blanks"},
		{"Port=" + strings.Repeat("1", 1020) + "\n", "f.conf:1: line longer than 1022 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var s Settings
			err := s.Parse(strings.NewReader(tt.text), "f.conf")
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Parse: %v, want a *LineError", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestLoadOver checks that a second file replaces only the keys it sets,
// as -z's file goes over the default one.
func TestLoadOver(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "ibdiag.conf")
	other := filepath.Join(dir, "other.conf")
	if err := os.WriteFile(def, []byte("CA=mlx5_0\nPort=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("# site\nPort=2\ntimeout=30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var s Settings
	for _, p := range []string{def, other} {
		if err := s.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	want := view{CA: "mlx5_0", Port: 2, TimeoutMS: 30, Set: []string{"CA", "Port", "timeout"}}
	if diff := cmp.Diff(want, viewOf(&s)); diff != "" {
		t.Errorf("unexpected settings (-want +got):\n%s", diff)
	}
	if got, want := s.Where(KeyPort), other+":2"; got != want {
		t.Errorf("Where(Port) = %q, want %q", got, want)
	}
	if got, want := s.Where(KeyCA), def+":1"; got != want {
		t.Errorf("Where(CA) = %q, want %q", got, want)
	}
	if err := s.Load(filepath.Join(dir, "none.conf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestKeyString(t *testing.T) {
	var got []string
	for _, k := range append(keys, 1<<10) {
		got = append(got, k.String())
	}
	want := []string{"CA", "Port", "timeout", "MLX_EPI", "m_key", "sa_key", "nd_format", "Key(1024)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected key names (-want +got):\n%s", diff)
	}
}

// FuzzParse checks that Parse never panics, that an error names the file
// and a line that exists, and that every key it sets says where.
func FuzzParse(f *testing.F) {
	f.Add(shipped)
	f.Add("CA=mlx5_0\nPort=0x2\ntimeout=50\nMLX_EPI=TRUE\nm_key=1\nsa_key=0\nnd_format=x\n")
	f.Add(" CA=x\nCAx=y\n=z\nPort=010\n")
	f.Fuzz(func(t *testing.T, text string) {
		var s Settings
		err := s.Parse(strings.NewReader(text), "f")
		var le *LineError
		if errors.As(err, &le) {
			if le.Path != "f" || le.Line < 1 || le.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("error %v names line %d of a %d-line text", err, le.Line, strings.Count(text, "\n")+1)
			}
		} else if err != nil {
			t.Fatalf("Parse: %v, want a *LineError or nil", err)
		}
		for _, k := range keys {
			if s.Has(k) != (s.Where(k) != "") {
				t.Fatalf("key %s: Has %v but Where %q", k, s.Has(k), s.Where(k))
			}
		}
		if s.Port < 0 || s.Port > 255 || s.TimeoutMS < 0 {
			t.Fatalf("Port %d, timeout %d out of range", s.Port, s.TimeoutMS)
		}
	})
}
