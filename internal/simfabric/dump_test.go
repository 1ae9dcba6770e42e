package simfabric

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseDumpText runs the Dump parser on a whole reply.
func parseDumpText(text []byte) ([]PortStatus, error) {
	var d dumpParser
	for _, l := range bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n")) {
		if err := d.line(l); err != nil {
			return nil, err
		}
	}
	return d.ports, d.finish()
}

func TestParseDumpCaptured(t *testing.T) {
	text, err := os.ReadFile("testdata/dump.2sw2path4hca.txt")
	if err != nil {
		t.Fatal(err)
	}
	ports, err := parseDumpText(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2*9+4*2 {
		t.Errorf("%d ports, want 26", len(ports))
	}
	byRef := map[PortRef]PortStatus{}
	for _, p := range ports {
		byRef[p.PortRef] = p
	}
	want := []PortStatus{
		{PortRef: Port("Switch1", 0), NodeType: NodeSwitch, GUID: 0x200000, LID: 1, State: "Active", PhysState: "LinkUp"},
		{PortRef: Port("Switch1", 3), NodeType: NodeSwitch, GUID: 0x200000, Remote: Port("Switch2", 3), State: "Active", PhysState: "LinkUp"},
		{PortRef: Port("Switch1", 4), NodeType: NodeSwitch, GUID: 0x200000, State: "Down", PhysState: "Polling"},
		{PortRef: Port("Switch2", 2), NodeType: NodeSwitch, GUID: 0x200001, State: "Down", PhysState: "Polling"},
		{PortRef: Port("Hca1", 1), NodeType: NodeCA, GUID: 0x100001, Remote: Port("Switch1", 1), LID: 2, State: "Active", PhysState: "LinkUp"},
		{PortRef: Port("Hca4", 1), NodeType: NodeCA, GUID: 0x10000a, LID: 6, State: "Down", PhysState: "Polling"},
		{PortRef: Port("Hca4", 2), NodeType: NodeCA, GUID: 0x10000b, State: "Down", PhysState: "Polling"},
	}
	for _, w := range want {
		if diff := cmp.Diff(w, byRef[w.PortRef]); diff != "" {
			t.Errorf("port %s (-want +got):\n%s", w.PortRef, diff)
		}
	}
	// Hca4 was unlinked: the rest is ready, and one cabled pair short.
	if err := checkReady(ports, -1); err != nil {
		t.Errorf("checkReady: %v", err)
	}
	if err := checkReady(ports, 12); err == nil || !strings.Contains(err.Error(), "10 cabled ports, the net file lists 12") {
		t.Errorf("checkReady with 12 links: got %v", err)
	}
}

func TestParseDumpErrors(t *testing.T) {
	const head = "# Net status - now\n\nSwitch 8 \"S\"\tnodeguid 1\tsysimgguid 1\n"
	tests := []struct {
		name, text, want string
	}{
		{"cut short", head + "1\t[0]\t\"Sma Port\"[0]\t lid 1 lmc 0 smlid 1  4x  2.5G Active/LinkUp\n", `no "dumped N nodes"`},
		{"count mismatch", head + "#  dumped 2 nodes\n", "1 node records, but ibsim says it dumped 2"},
		{"port before node", "1\t[1]\t\t 4x 2.5G Down/Polling\n#  dumped 0 nodes\n", "before any node header"},
		{"bad guid", head + "xyz\t[1]\t\t 4x 2.5G Down/Polling\n#  dumped 1 nodes\n", "bad GUID"},
		{"no port", head + "1\t1]\t\t 4x 2.5G Down/Polling\n#  dumped 1 nodes\n", "no [port]"},
		{"bad remote", head + "1\t[1]\t\"X\"1\t 4x 2.5G Active/LinkUp\n#  dumped 1 nodes\n", "bad \"remote\"[port]"},
		{"no state", head + "1\t[1]\t\t 4x 2.5G\n#  dumped 1 nodes\n", "no State/PhysState"},
		{"bad lid", head + "1\t[0]\t\"Sma Port\"[0]\t lid x lmc 0 Active/LinkUp\n#  dumped 1 nodes\n", "bad lid"},
		{"header without id", "Switch 8 S\n#  dumped 1 nodes\n", "quoted ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseDumpText([]byte(tt.text))
			if !errors.Is(err, ErrDumpSyntax) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an ErrDumpSyntax containing %q", err, tt.want)
			}
		})
	}
}

func TestCheckReady(t *testing.T) {
	sw0 := PortStatus{PortRef: Port("S", 0), NodeType: NodeSwitch, LID: 1, State: "Active", PhysState: "LinkUp"}
	swLink := PortStatus{PortRef: Port("S", 1), NodeType: NodeSwitch, Remote: Port("H", 1), State: "Active", PhysState: "LinkUp"}
	caLink := PortStatus{PortRef: Port("H", 1), NodeType: NodeCA, Remote: Port("S", 1), LID: 2, State: "Active", PhysState: "LinkUp"}
	caFree := PortStatus{PortRef: Port("H", 2), NodeType: NodeCA, State: "Down", PhysState: "Polling"}
	with := func(p PortStatus, edit func(*PortStatus)) PortStatus { edit(&p); return p }
	tests := []struct {
		name  string
		ports []PortStatus
		want  int // wantLinked argument
		err   string
	}{
		{"ready", []PortStatus{sw0, swLink, caLink, caFree}, 2, ""},
		{"any count", []PortStatus{sw0, swLink, caLink}, -1, ""},
		{"init", []PortStatus{sw0, with(swLink, func(p *PortStatus) { p.State = "Init" }), caLink}, 2, `1 of 2 cabled ports not ready: "S"[1] Init/LinkUp`},
		{"no ca lid", []PortStatus{sw0, swLink, with(caLink, func(p *PortStatus) { p.LID = 0 })}, 2, `"H"[1] no LID`},
		{"no switch lid", []PortStatus{with(sw0, func(p *PortStatus) { p.LID = 0 }), swLink, caLink}, 2, `"S"[0] no LID`},
		{"count", []PortStatus{sw0, swLink, caLink}, 4, "ibsim has 2 cabled ports, the net file lists 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkReady(tt.ports, tt.want)
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("got %v, want an error containing %q", err, tt.err)
			}
		})
	}
}

func TestCheckReadyListsFew(t *testing.T) {
	var ports []PortStatus
	for i := range 20 {
		ports = append(ports, PortStatus{PortRef: Port("S", i+1), NodeType: NodeSwitch, Remote: Port("T", i+1), State: "Init"})
	}
	err := checkReady(ports, -1)
	if err == nil || strings.Count(err.Error(), "Init") != maxListed || !strings.HasSuffix(err.Error(), ", ...") {
		t.Errorf("got %v, want %d ports named then \", ...\"", err, maxListed)
	}
}

func FuzzParseDump(f *testing.F) {
	if text, err := os.ReadFile("testdata/dump.2sw2path4hca.txt"); err == nil {
		f.Add(text)
	}
	f.Add([]byte("Ca 1 \"H\"\n1\t[1]\t\"S\"[1]\t lid 2 Active/LinkUp\t# err_rate 1\n#  dumped 1 nodes\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		ports, err := parseDumpText(text)
		if err != nil {
			return
		}
		for _, p := range ports {
			if p.Node == "" || p.State == "" {
				t.Errorf("parsed a port without node or state: %+v", p)
			}
		}
		_ = checkReady(ports, -1)
	})
}

func TestReplyScanner(t *testing.T) {
	tests := []struct {
		name   string
		marker string
		chunks []string
		lines  []string
		done   bool
	}{
		{"empty reply", "", []string{"sim> "}, nil, true},
		{"lines then prompt", "", []string{"a\nb\nsim> "}, []string{"a", "b"}, true},
		{"split prompt", "", []string{"a\nsi", "m> "}, []string{"a"}, true},
		{"split line", "", []string{"ab", "c\n", "sim> "}, []string{"abc"}, true},
		{"no newline before prompt", "", []string{"# missing portnumsim> "}, []string{"# missing portnum"}, true},
		{"not yet", "", []string{"a\nb"}, []string{"a"}, false},
		{"output after prompt ignored", "", []string{"a\nsim> late\n"}, []string{"a"}, true},
		{"prompt text inside a line", "", []string{"x sim> y\nsim> "}, []string{"x sim> y"}, true},
		{"marker skips leftovers", "#m1sim> ", []string{"old\nsim> #m1sim> new\nsim> "}, []string{"new"}, true},
		{"marker split", "#m1sim> ", []string{"old reply\n", "sim> #m", "1si", "m> a\nsim> "}, []string{"a"}, true},
		{"marker not yet", "#m1sim> ", []string{"old\nsim> #m2sim> b\nsim> "}, nil, false},
		{"marker then empty reply", "#m1sim> ", []string{"#m1sim> ", "sim> "}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc replyScanner
			if tt.marker != "" {
				sc.marker = []byte(tt.marker)
			}
			var got []string
			done := false
			for _, c := range tt.chunks {
				var err error
				done, err = sc.feed([]byte(c), func(l []byte) error { got = append(got, string(l)); return nil })
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
			}
			if done != tt.done {
				t.Errorf("done %v, want %v", done, tt.done)
			}
			if diff := cmp.Diff(tt.lines, got); diff != "" {
				t.Errorf("unexpected lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckReply(t *testing.T) {
	tests := []struct {
		reply, err string
	}{
		{"", ""},
		{"Hca1[1] PortCounters.SymbolErrorCounter has been set to 5\n", ""},
		{"# nodeid \"X\" (X) not found\n", `Unlink "X"[1]: nodeid "X" (X) not found`},
		{"command 'Foo' unknown - skipped\n", "unknown - skipped"},
		{"bad params. Usage: route from-lid lid\n", "bad params"},
		{"wait: bad param -1\n", "bad param"},
	}
	for _, tt := range tests {
		err := checkReply(`Unlink "X"[1]`, tt.reply)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("reply %q: unexpected error %v", tt.reply, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrConsole)):
			t.Errorf("reply %q: got %v, want an ErrConsole containing %q", tt.reply, err, tt.err)
		}
	}
}

func TestIsLinkChange(t *testing.T) {
	for cmd, want := range map[string]bool{
		`Unlink "H"[1]`:         true,
		`  link "a"[1] "b"[2]`:  true,
		`ReLink "H"`:            true,
		`Clear "H"[1]`:          true,
		`Dump`:                  false,
		`Linkx`:                 false,
		`Error "H"[1] 10`:       false,
		`PerformanceSet "H"[1]`: false,
	} {
		if got := isLinkChange(cmd); got != want {
			t.Errorf("isLinkChange(%q) = %v, want %v", cmd, got, want)
		}
	}
}
