package simfabric

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreWhere = cmpopts.IgnoreFields(NetNode{}, "Where")

func TestReadNetFileExample(t *testing.T) {
	net, err := ReadNetFile(smallNet)
	if err != nil {
		t.Fatal(err)
	}
	sw := func(id string, links ...NetLink) NetNode {
		return NetNode{Type: NodeSwitch, ID: id, Ports: 8, Links: links}
	}
	ca := func(id string, links ...NetLink) NetNode {
		return NetNode{Type: NodeCA, ID: id, Ports: 2, Links: links}
	}
	l := func(p int, r string, rp int) NetLink { return NetLink{Port: p, RemoteID: r, RemotePort: rp} }
	want := &Net{Nodes: []NetNode{
		sw("Switch1", l(1, "Hca1", 1), l(2, "Hca3", 1), l(3, "Switch2", 3), l(5, "Switch2", 5)),
		sw("Switch2", l(1, "Hca2", 1), l(2, "Hca4", 1), l(3, "Switch1", 3), l(5, "Switch1", 5)),
		ca("Hca1", l(1, "Switch1", 1)),
		ca("Hca2", l(1, "Switch2", 1)),
		ca("Hca3", l(1, "Switch1", 2)),
		ca("Hca4", l(1, "Switch2", 2)),
	}}
	if diff := cmp.Diff(want, net, ignoreWhere); diff != "" {
		t.Errorf("unexpected net (-want +got):\n%s", diff)
	}
	if got, want := net.Nodes[2].Where, smallNet+":36"; got != want {
		t.Errorf("Hca1 at %s, want %s", got, want)
	}
	wantCounts := NetCounts{Nodes: 6, Switches: 2, Ports: 2*9 + 4*2, EndPorts: 2 + 4*2, Links: 12}
	if diff := cmp.Diff(wantCounts, net.Counts()); diff != "" {
		t.Errorf("unexpected counts (-want +got):\n%s", diff)
	}
	if net.Node("Hca3") == nil || net.Node("Hca3").Links[0].RemotePort != 2 || net.Node("Nope") != nil {
		t.Error("Node lookup is wrong")
	}
}

func TestParseNet(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []NetNode
	}{
		{
			name: "ibnetdiscover output",
			text: "vendid=0x8f1\ndevid=0x5a5a\nsysimgguid=0x8f10400411f56\n" +
				"switchguid=0x8f10400411f56(8f10400411f56)\n" +
				"Switch\t24 \"S-0008f10400411f56\"\t\t# \"ISR9024 Voltaire\" base port 0 lid 1 lmc 0\n" +
				"[1]\t\"H-0008f10403960558\"[2](8f1040396055a) \t\t# \"MT23108 InfiniHost Mellanox Technologies\" lid 3 4xSDR\n" +
				"\n" +
				"Ca\t2 \"H-0008f10403960558\"\t\t# MT23108 InfiniHost lid 3\n" +
				"[2](8f1040396055a) \t\"S-0008f10400411f56\"[1]\t\t# lid 3 lmc 0 \"ISR9024 Voltaire\" lid 1 4xSDR\n",
			want: []NetNode{
				{Type: NodeSwitch, ID: "S-0008f10400411f56", Desc: "ISR9024 Voltaire", Ports: 24,
					Links: []NetLink{{Port: 1, RemoteID: "H-0008f10403960558", RemotePort: 2}}},
				{Type: NodeCA, ID: "H-0008f10403960558", Desc: "MT23108 InfiniHost", Ports: 2,
					Links: []NetLink{{Port: 2, RemoteID: "S-0008f10400411f56", RemotePort: 1}}},
			},
		},
		{
			// ibsim consumes the line that ends a record: a header right
			// after a port line, without a blank line, is lost.
			name: "header swallowed",
			text: "Switch 4 \"S\"\n[1] \"A\"[1]\nHca 1 \"A\"\n[1] \"S\"[1]\n\nHca 1 \"B\"\n",
			want: []NetNode{
				{Type: NodeSwitch, ID: "S", Ports: 4, Links: []NetLink{{Port: 1, RemoteID: "A", RemotePort: 1}}},
				{Type: NodeCA, ID: "B", Ports: 1},
			},
		},
		{
			name: "comment in record, default remote port",
			text: "Rt 2 \"R\"\n# a comment\n[2] \"S\"\n",
			want: []NetNode{{Type: NodeRouter, ID: "R", Ports: 2, Links: []NetLink{{Port: 2, RemoteID: "S", RemotePort: 1}}}},
		},
		{
			// A record ends after as many port lines as ports; a port line
			// after that is an unknown top-level line, ignored.
			name: "record full",
			text: "Hca 1 \"H\"\n[1] \"S\"[1]\n[1] \"T\"[1]\n",
			want: []NetNode{{Type: NodeCA, ID: "H", Ports: 1, Links: []NetLink{{Port: 1, RemoteID: "S", RemotePort: 1}}}},
		},
		{
			name: "aliases",
			text: "Switch 4 \"S\"\n@[2] \"sw-alias\"\n[3] \"@h-alias\"[1]\n",
			want: []NetNode{{Type: NodeSwitch, ID: "S", Ports: 4, Links: []NetLink{{Port: 3, RemoteID: "@h-alias", RemotePort: 1, Alias: true}}}},
		},
		{
			name: "C number bases",
			text: "Switch 0x10 \"hex\"\n\nSwitch 010 \"octal\"\n\nHca\t3\"tight\"\n",
			want: []NetNode{
				{Type: NodeSwitch, ID: "hex", Ports: 16},
				{Type: NodeSwitch, ID: "octal", Ports: 8},
				{Type: NodeCA, ID: "tight", Ports: 3},
			},
		},
		{
			name: "no trailing newline, CRLF-free",
			text: "Hca 1 \"H\"\n[1] \"S\"[1]",
			want: []NetNode{{Type: NodeCA, ID: "H", Ports: 1, Links: []NetLink{{Port: 1, RemoteID: "S", RemotePort: 1}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			net, err := ParseNet("test", []byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, net.Nodes, ignoreWhere, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected nodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNetErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"no id", "Switch 8 Switch1\n", "test:1: Switch header without a quoted node ID"},
		{"no port count", "Hca \"H\"\n", "without a port count"},
		{"zero ports", "Hca 0 \"H\"\n", "without a port count"},
		{"too many ports", "Switch 256 \"S\"\n", "256 ports, ibsim takes at most 255"},
		{"empty id", "Hca 1 \"\"\n", "empty node ID"},
		{"reserved char", "Hca 1 \"a#b\"\n", "reserves"},
		{"long id", "Hca 1 \"" + strings.Repeat("x", 65) + "\"\n", "longer than ibsim's 64"},
		{"duplicate node", "Hca 1 \"H\"\n\nHca 1 \"H\"\n", "test:3: node ID \"H\" defined twice"},
		{"port zero", "Switch 4 \"S\"\n[0] \"H\"[1]\n", "bad port number"},
		{"port too big", "Hca 2 \"H\"\n[3] \"S\"[1]\n", "\"H\" has ports 1 to 2"},
		{"port twice", "Switch 4 \"S\"\n[1] \"H\"[1]\n[1] \"G\"[1]\n", "test:3: port 1 of \"S\" listed twice"},
		{"no remote", "Hca 1 \"H\"\n[1] S[1]\n", "without a quoted remote node ID"},
		{"bad remote port", "Hca 1 \"H\"\n[1] \"S\"[0]\n", "bad remote port number"},
		{"long line", "Hca 1 \"H\" " + strings.Repeat("x", 260) + "\n", "longer than ibsim's 254 bytes"},
		{"long port line", "Hca 1 \"H\"\n[1] \"S\"[1] " + strings.Repeat("x", 260) + "\n", "longer than ibsim's 254 bytes"},
		{"include unquoted", "include net2\n", "include without a quoted file name"},
		{"include from bytes", "include \"net2\"\n", "only followed when reading from a file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseNet("test", []byte(tt.text))
			if !errors.Is(err, ErrNetSyntax) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an ErrNetSyntax containing %q", err, tt.want)
			}
		})
	}
}

func TestReadNetFileInclude(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main", "Hca 1 \"A\"\n[1] \"S\"[1]\n\ninclude \"sub\"\n\nHca 1 \"B\"\n[1] \"S\"[2]\n")
	write("sub", "Switch 2 \"S\"\n[1] \"A\"[1]\n[2] \"B\"[1]\n")
	write("loop", "include \"loop\"\n")
	write("dup", "Switch 2 \"S\"\n\ninclude \"sub\"\n")

	net, err := ReadNetFile(filepath.Join(dir, "main"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range net.Nodes {
		ids = append(ids, n.ID)
	}
	if diff := cmp.Diff([]string{"A", "S", "B"}, ids); diff != "" {
		t.Errorf("unexpected nodes (-want +got):\n%s", diff)
	}
	if got := net.Node("S").Where; got != filepath.Join(dir, "sub")+":1" {
		t.Errorf("S at %s, want sub:1", got)
	}
	for name, want := range map[string]string{
		"loop":    "nested deeper than ibsim's 9 levels",
		"dup":     "node ID \"S\" defined twice",
		"missing": "no such file",
	} {
		if _, err := ReadNetFile(filepath.Join(dir, name)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadNetFile(%s): got %v, want an error containing %q", name, err, want)
		}
	}
}

func TestIbsimLimits(t *testing.T) {
	tests := []struct {
		name   string
		counts NetCounts
		want   []string
		err    error
	}{
		{"small", NetCounts{Nodes: 6, Switches: 2, Ports: 26, EndPorts: 10}, nil, nil},
		{"at defaults", NetCounts{Nodes: 2048, Switches: 256, Ports: 13312, EndPorts: 30719}, nil, nil},
		{"nodes", NetCounts{Nodes: 4619, Switches: 619, Ports: 26903, EndPorts: 4619}, []string{"-N", "4619", "-S", "619", "-P", "26903"}, nil},
		{"lids", NetCounts{Nodes: 40000, Switches: 100, Ports: 50000, EndPorts: 40000}, []string{"-N", "40000", "-P", "50000", "-L", "40001"}, nil},
		{"too many lids", NetCounts{EndPorts: 0xc000}, nil, ErrTooManyLIDs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.counts.IbsimLimits()
			if !errors.Is(err, tt.err) {
				t.Fatalf("got error %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultTimeout(t *testing.T) {
	for _, tt := range []struct {
		nodes    int
		min, max float64 // seconds
	}{
		{6, 30, 31},
		{1164, 40, 50},
		{4619, 90, 110},
		{30528, 1200, 1300},
	} {
		got := DefaultTimeout(NetCounts{Nodes: tt.nodes}).Seconds()
		if got < tt.min || got > tt.max {
			t.Errorf("DefaultTimeout(%d nodes) = %.0fs, want %v to %vs", tt.nodes, got, tt.min, tt.max)
		}
	}
}

func FuzzParseNet(f *testing.F) {
	if text, err := os.ReadFile(smallNet); err == nil {
		f.Add(text)
	}
	if text, err := FatTree(FatTreeSpec{Levels: 3, Hosts: 5, Radix: 4}); err == nil {
		f.Add(text)
	}
	f.Add([]byte("Switch 0x10 \"S\" # \"desc\" lid 1\n@[2] \"a\"\n[3] \"@b\"\n#\n[4](abc) \"H\"[1] w=4\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		net, err := ParseNet("fuzz", text)
		if err != nil {
			if !errors.Is(err, ErrNetSyntax) {
				t.Errorf("error %v does not wrap ErrNetSyntax", err)
			}
			return
		}
		c := net.Counts()
		if c.Links > c.Ports || c.Switches > c.Nodes || c.EndPorts > c.Ports {
			t.Errorf("inconsistent counts %+v", c)
		}
		for _, n := range net.Nodes {
			if n.Ports < 1 || n.Ports > netMaxPorts || n.ID == "" || len(n.Links) > n.Ports {
				t.Errorf("bad node %+v", n)
			}
		}
		_, _ = c.IbsimLimits()
	})
}
