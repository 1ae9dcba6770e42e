package simfabric

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseDumpPortChange(t *testing.T) {
	text, err := os.ReadFile("testdata/dump.2sw2path4hca.txt")
	if err != nil {
		t.Fatal(err)
	}
	var d dumpParser
	for _, l := range bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n")) {
		if bytes.Contains(l, []byte("FDBtop")) && d.nodes == 2 {
			l = bytes.Replace(l, []byte("portchange 0"), []byte("portchange 1"), 1)
		}
		d.line(l)
	}
	if err := d.finish(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Switch2"}, d.changed); diff != "" {
		t.Errorf("unexpected switches with port changes (-want +got):\n%s", diff)
	}
}

func TestSweepWaitSettled(t *testing.T) {
	ready := []PortStatus{{PortRef: Port("H", 1), NodeType: NodeCA, Remote: Port("S", 1), LID: 2, State: "Active", PhysState: "LinkUp"}}
	initPort := []PortStatus{{PortRef: Port("H", 1), NodeType: NodeCA, Remote: Port("S", 1), LID: 2, State: "Init", PhysState: "LinkUp"}}
	tests := []struct {
		name     string
		owed     bool // a link change since the last wait
		trap, up bool
		d        dumpParser
		want     bool
	}{
		{"nothing owed", false, false, false, dumpParser{ports: ready}, true},
		{"no-op change: no trap, no bit", true, false, false, dumpParser{ports: ready}, true},
		{"trap, sweep running", true, true, false, dumpParser{ports: ready}, false},
		{"trap, swept", true, true, true, dumpParser{ports: ready}, true},
		{"bit set, no trap yet", true, false, false, dumpParser{ports: ready, changed: []string{"S"}}, false},
		{"bit set after SUBNET UP", true, true, true, dumpParser{ports: ready, changed: []string{"S"}}, false},
		{"bit set, nothing owed", false, false, false, dumpParser{ports: ready, changed: []string{"S"}}, false},
		{"port in Init", true, true, true, dumpParser{ports: initPort}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w sweepWait
			if tt.owed {
				w.expect("unused", 0)
				w.trap, w.up = tt.trap, tt.up
			}
			if got := w.settled(&tt.d); got != tt.want {
				t.Errorf("settled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSweepWaitScan(t *testing.T) {
	log := filepath.Join(t.TempDir(), "opensm.log")
	write := func(s string) {
		fh, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(s)
		fh.Close()
	}
	write("old -> SUBNET UP\n")
	var w sweepWait
	w.expect(log, fileSize(log))
	steps := []struct {
		add      string
		trap, up bool
	}{
		{"", false, false},
		{"x 0x01 -> log_trap_info: Received Generic Notice type:1 num:128\n", true, false},
		{"x 0x02 -> SUBNET UP", true, false}, // no newline yet: half a line
		{"\n", true, true},
	}
	for i, s := range steps {
		write(s.add)
		if err := w.scan(); err != nil {
			t.Fatal(err)
		}
		if w.trap != s.trap || w.up != s.up {
			t.Errorf("step %d: trap %v up %v, want %v %v", i, w.trap, w.up, s.trap, s.up)
		}
	}
}
