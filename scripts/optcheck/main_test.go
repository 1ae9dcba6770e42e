package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLeadingOptions(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"  --extended, -x          show extended port counters", []string{"--extended", "-x"}},
		{"  --outstanding_smps, -o <val>  specify the number", []string{"--outstanding_smps", "-o"}},
		{"  --node-name-map <file>  node name map file", []string{"--node-name-map"}},
		{"  --, -S <port_guid>      Same as \"-G\"", []string{"-S"}},
		{"  -p, --port=<port>      listen on/connect to port", []string{"-p", "--port"}},
		{"  -o, --odp\t\t    use on demand paging", []string{"-o", "--odp"}},
		{"\t-h:\tthis help screen", []string{"-h"}},
		{"  -e turn on heuristic(s)", []string{"-e"}},
		{"-1 if scan fails.", nil},
		{"-ddd or -d -d -d", nil},
		{"  perfquery -x 32 1", nil},
		{"--cckey, -c, <cckey>", []string{"--cckey", "-c"}},
		{"--Lid_show, -L", []string{"--Lid_show", "-L"}},
		{"  -t|--topo <topo file> = the topology file", []string{"-t", "--topo"}},
		{"  -M|--MFT = include multicast routing", []string{"-M", "--MFT"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, leadingOptions(tt.line)); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHelpOptions(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"getopt_long", "Usage: perfquery [options]  [<lid|guid>]\n\nOptions:\n  --extended, -x   show\n  --help, -h  help message\n",
			[]string{"--extended", "-x", "--help", "-h"}},
		{"Getopt::Std", "Usage: check_lft_balance [-OPTIONS [-MORE_OPTIONS]] [--] [PROGRAM_ARG1 ...]\n\tWith arguments: -l -i\n\tBoolean (without arguments): -h -v\n",
			[]string{"-l", "-i", "-h", "-v"}},
		{"usage line", "Usage: ibhosts [-h] [<topology-file> | -y mkey -C ca_name -P ca_port -t timeout_ms]\n",
			[]string{"-h", "-y", "-C", "-P", "-t"}},
		{"cluster", "Usage: ibidsverify [-Rh]\n", []string{"-R", "-h"}},
		{"no options", "Usage: ibv_devinfo             print the ca attributes\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, helpOptions(tt.text)); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManOptions(t *testing.T) {
	roff := strings.Join([]string{
		`.\" \fB\-q\fP in a comment`,
		`.TP`,
		`.B \fB\-x, \-\-extended\fP`,
		`show extended port counters; see \fB\-a\fP`,
		`\fB\-G, \-\-Guid\fP     The address specified is a Port GUID`,
		`.B  \-d`,
		`\fB\-p\fR, \fB\-\-port\fR=\fIPORT\fR`,
		`[\-p port] [\-d device] [\-e]`,
		`\fB\-1\fP if scan fails.`,
		`.IP "\-n|\-\-node <\s-1SM\s0 Node>" 4`,
	}, "\n")
	want := []string{"-x", "--extended", "-G", "--Guid", "-d", "-p", "--port", "-p", "-d", "-e", "-n", "--node"}
	if diff := cmp.Diff(want, manOptions(roff)); diff != "" {
		t.Errorf("unexpected options (-want +got):\n%s", diff)
	}
}

func TestCheck(t *testing.T) {
	progs := []Program{
		{Name: "perfquery", Options: []Option{{"-x", "help,man"}, {"-s", "help,man"}, {"-e", "help"}}},
		{Name: "ibv_rc_pingpong", Options: []Option{{"-p", "help,man"}}},
	}
	ibtool := map[string]flagSet{"perfquery": func(o string) bool { return o == "-x" }}
	known := map[string]string{
		"perfquery -s":  "issue 18",
		"perfquery -x":  "stale: accepted now",
		"ibaddr --nope": "stale: no such option",
	}
	r, err := check(context.Background(), progs, ibtool, known)
	if err != nil {
		t.Fatal(err)
	}
	wantMissing := []string{"perfquery -s", "perfquery -e", "ibv_rc_pingpong -p"}
	wantUnlisted := []string{"perfquery -e", "ibv_rc_pingpong -p"}
	wantStale := []string{"ibaddr --nope", "perfquery -x"}
	keys := func(ms []missingOption) []string {
		var ks []string
		for _, m := range ms {
			ks = append(ks, m.key())
		}
		return ks
	}
	if diff := cmp.Diff(wantMissing, keys(r.missing)); diff != "" {
		t.Errorf("unexpected missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantUnlisted, keys(r.unlisted)); diff != "" {
		t.Errorf("unexpected unlisted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantStale, r.stale); diff != "" {
		t.Errorf("unexpected stale (-want +got):\n%s", diff)
	}
	var out bytes.Buffer
	r.write(&out)
	if !strings.HasPrefix(out.String(), "3 options missing (of 4 options of 2 programs)\n") {
		t.Errorf("report starts %q", out.String())
	}
}

func TestReadKnown(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string
		err        string
	}{
		{"ok", "# comment\n\nperfquery -s issue 18 point 3\n", map[string]string{"perfquery -s": "issue 18 point 3"}, ""},
		{"no reason", "perfquery -s\n", nil, "want \"tool option reason\""},
		{"not an option", "perfquery s why\n", nil, "want \"tool option reason\""},
		{"twice", "perfquery -s a\nperfquery -s b\n", nil, "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "missing.txt")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readKnown(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected list (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIBToolFlags checks the lookup against ibtool's real command tree:
// perfquery has -x and --extended, and the help flag cobra adds.
func TestIBToolFlags(t *testing.T) {
	has := ibtoolFlags()["perfquery"]
	if has == nil {
		t.Fatal("no perfquery in ibtool's tools")
	}
	for _, o := range []string{"-x", "--extended", "-h", "--help", "-V"} {
		if !has(o) {
			t.Errorf("perfquery does not accept %s", o)
		}
	}
	if has("--no-such-option") || has("-j") {
		t.Error("perfquery accepts an option it does not have")
	}
}

func TestReadPythonRdma(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "py.txt")
	os.WriteFile(path, []byte("# comment\n\nperfquery -x\nperfquery --smkey\nsaquery --sa-path\nperfquery --smkey\n"), 0o644)
	diags := []Program{{Name: "perfquery", Options: []Option{{"-x", "help,man"}}}}
	got, err := readPythonRdma(path, diags)
	if err != nil {
		t.Fatal(err)
	}
	want := []Program{
		{Name: "perfquery", Options: []Option{{"--smkey", "python-rdma"}}},
		{Name: "saquery", Options: []Option{{"--sa-path", "python-rdma"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readPythonRdma (-want +got):\n%s", diff)
	}
	os.WriteFile(path, []byte("perfquery x\n"), 0o644)
	if _, err := readPythonRdma(path, nil); err == nil || !strings.Contains(err.Error(), "py.txt:1") {
		t.Errorf("a line without an option: %v, want an error naming the line", err)
	}
}

// TestPythonRdmaFile checks the committed file reads, and names the
// python-rdma commands ibtool has.
func TestPythonRdmaFile(t *testing.T) {
	progs, err := readPythonRdma("python-rdma.txt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(progs) < 45 {
		t.Errorf("%d python-rdma commands, want the 50 of libibtool but help", len(progs))
	}
	flags := ibtoolFlags()
	for _, p := range progs {
		if flags[p.Name] == nil {
			t.Errorf("python-rdma's %s is no ibtool tool", p.Name)
		}
	}
}
