package smp

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

// smpDocKeys adds the key paths of a decoded JSON value to keys under
// prefix: "portInfo.lid", a list's elements as "[]".
func smpDocKeys(keys map[string]bool, prefix string, v any) {
	if m, isMap := v.(map[string]any); isMap {
		for k, e := range m {
			smpDocKeys(keys, prefix+"."+k, e)
		}
	} else if list, isList := v.([]any); isList {
		for _, e := range list {
			smpDocKeys(keys, prefix+"[]", e)
		}
	} else {
		keys[strings.TrimPrefix(prefix, ".")] = true
	}
}

// attrKeys returns the JSON keys of a generated attribute under prefix.
func attrKeys(prefix string, a mad.Attribute) []string {
	var keys []string
	for _, f := range a.Layout().Fields {
		keys = append(keys, prefix+f.JSON)
	}
	return keys
}

// planKeys are the keys of a dry run's plan (mad.Plan) under prefix.
func planKeys(prefix string, withLID, withDR bool) []string {
	keys := []string{"request", "device", "port", "class", "attribute", "attributeId", "attributeModifier",
		"fields[].name", "fields[].value", "fields[].text"}
	if withLID {
		keys = append(keys, "lid")
	}
	if withDR {
		keys = append(keys, "directedRoute[]")
	}
	for i := range keys {
		keys[i] = prefix + keys[i]
	}
	return keys
}

func joinKeys(lists ...[]string) []string { return slices.Concat(lists...) }

// TestSMPToolsJSONKeys pins the keys of each SMP tool's --json document,
// so that a change to how a tool builds it shows.
func TestSMPToolsJSONKeys(t *testing.T) {
	tests := []struct {
		tool string
		args []string
		want []string
	}{
		{"smpquery", []string{"ni", "2"}, joinKeys([]string{"target"}, attrKeys("nodeInfo.", &mad.NodeInfo{}))},
		{"smpquery", []string{"nd", "2"}, []string{"target", "nodeDescription"}},
		{"smpquery", []string{"pi", "2", "1"}, joinKeys([]string{"target", "port"}, attrKeys("portInfo.", &mad.PortInfo{}))},
		{"smpquery", []string{"pie", "2", "1"}, joinKeys([]string{"target", "port"}, attrKeys("portInfoExtended.", &mad.PortInfoExtended{}))},
		{"smpquery", []string{"si", "2"}, joinKeys([]string{"target"}, attrKeys("switchInfo.", &mad.SwitchInfo{}))},
		{"smpquery", []string{"mepi", "2", "1"}, joinKeys([]string{"target", "port"}, attrKeys("mlnxExtPortInfo.", &mad.MlnxExtPortInfo{}))},
		{"smpquery", []string{"pkeys", "2", "1"}, []string{"target", "port", "capacity", "pkeys[]"}},
		{"smpquery", []string{"gi", "2"}, []string{"target", "capacity", "guids[]"}},
		{"smpquery", []string{"sl2vl", "2", "1"}, []string{"target", "sl2vl[].inPort", "sl2vl[].outPort", "sl2vl[].vl"}},
		{"smpquery", []string{"vlarb", "2", "1"}, []string{"target", "port", "lowCap", "highCap",
			"lowPriority[].vl", "lowPriority[].weight", "highPriority[].vl", "highPriority[].weight"}},
		{"smpquery", []string{"vlarb", "2"}, []string{"target", "port", "baseSwitchPort0"}},
		{"smpdump", []string{"2", "0x11"}, []string{"target", "attributeID", "attributeModifier", "status", "data"}},
		{"ibaddr", []string{"2"}, []string{"target", "gid", "lidStart", "lidEnd"}},
		{"ibaddr", []string{"-g", "2"}, []string{"target", "gid"}},
		{"ibaddr", []string{"-l"}, []string{"target", "lidStart", "lidEnd"}},
		{"sminfo", nil, []string{"target", "smLid", "guid", "actCount", "priority", "smState", "smStateName"}},
		{"sminfo", []string{"--dry-run", "-p", "3", "2", "1"}, joinKeys([]string{"target", "smLid", "guid", "actCount", "priority", "smState", "smStateName"},
			planKeys("dryRun[].", true, false))},
		{"ibportstate", []string{"2", "1"}, joinKeys([]string{"target", "port", "portInfo.path", "portInfo.port", "peer.path", "peer.port"},
			attrKeys("portInfo.portInfo.", &mad.PortInfo{}), attrKeys("peer.portInfo.", &mad.PortInfo{}))},
		{"ibportstate", []string{"2", "0", "down"}, joinKeys([]string{"target", "port", "portInfo.path", "portInfo.port", "after.path", "after.port"},
			attrKeys("portInfo.portInfo.", &mad.PortInfo{}), attrKeys("after.portInfo.", &mad.PortInfo{}))},
		{"ibportstate", []string{"--dry-run", "-D", "0", "1", "speed", "3"}, joinKeys([]string{"target", "port", "portInfo.path", "portInfo.port"},
			attrKeys("portInfo.portInfo.", &mad.PortInfo{}), planKeys("dryRun[].", false, true), []string{"dryRun[].fields[].was"})},
		{"query", []string{"SubnGet", "NodeInfo", "2"}, joinKeys([]string{"target", "attribute", "attributeModifier"}, attrKeys("data.", &mad.NodeInfo{}))},
		{"ibsendtrap", nil, []string{"trap", "sm", "notice"}},
		{"ibsendtrap", []string{"--dry-run", "pkey"}, joinKeys([]string{"trap", "sm", "notice"}, planKeys("dryRun[].", true, false))},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runSMPTool(t, tt.tool, append([]string{"--json"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("%v in %s", err, out)
			}
			got := map[string]bool{}
			smpDocKeys(got, "", doc)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if diff := cmp.Diff(want, slices.Sorted(maps.Keys(got))); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// smpGoldenRuns are the runs TestSMPToolsGolden keeps the whole output
// of: each tool's text and JSON, byte for byte.
var smpGoldenRuns = [][]string{
	{"smpquery", "ni", "2"}, {"smpquery", "nd", "-D", "0,1"}, {"smpquery", "pi", "2", "1"}, {"smpquery", "-K", "pi", "2", "1"},
	{"smpquery", "-x", "pi", "-D", "0,1", "1"}, {"smpquery", "pie", "2", "1"}, {"smpquery", "si", "2"},
	{"smpquery", "mepi", "2", "1"}, {"smpquery", "pkeys", "2", "1"}, {"smpquery", "pkeys", "-D", "0,1"},
	{"smpquery", "gi", "2"}, {"smpquery", "sl2vl", "2", "1"}, {"smpquery", "sl2vl", "-D", "0,1"},
	{"smpquery", "vlarb", "2", "1"}, {"smpquery", "vlarb", "2"}, {"smpquery", "-c", "pi", "2", "0,1", "1"},
	{"smpquery", "pie", "-D", "0,1", "1"},
	{"smpdump", "2", "0x11"}, {"smpdump", "-s", "0,1", "0x10"}, {"smpdump", "2", "0x99"},
	{"ibaddr"}, {"ibaddr", "2"}, {"ibaddr", "-g", "2"}, {"ibaddr", "-l", "0,1"}, {"ibaddr", "-L", "0,1", "1"},
	{"sminfo"}, {"sminfo", "-D", "0,1"}, {"sminfo", "--dry-run", "-p", "3", "2", "1"}, {"sminfo", "-s", "1", "2", "5"},
	{"ibportstate", "2", "1"}, {"ibportstate", "-K", "2", "0"}, {"ibportstate", "-D", "0,1", "1"},
	{"ibportstate", "2", "0", "down"}, {"ibportstate", "2", "1", "disable"}, {"ibportstate", "2", "1", "on"},
	{"ibportstate", "--dry-run", "-D", "0", "1", "speed", "3", "width", "1", "fdr10", "1"},
	{"ibportstate", "-D", "0,1", "1", "lid", "9", "mkey", "5", "arm"}, {"ibportstate", "2", "3", "mkey", "5"},
	{"query", "SubnGet", "NodeInfo", "2"}, {"query", "SubnGet", "PortInfo", "-a", "1"}, {"query", "SubnGet", "SMInfo", "0,1"},
	{"ibsendtrap"}, {"ibsendtrap", "--dry-run", "pkey"}, {"ibsendtrap", "--dry-run", "mkey_dr"},
	{"ibsendtrap", "--dry-run", "local_link_integrity", "3"}, {"ibsendtrap", "--dry-run", "sys_image_guid_change"},
	{"ibsendtrap", "--dry-run", "link_speed_enabled_change"}, {"ibsendtrap", "--dry-run", "qkey"}, {"ibsendtrap", "--dry-run", "mkey_lid"},
}

// TestSMPToolsGolden runs each of smpGoldenRuns in text and with --json
// and compares all that the tools wrote, and their errors, with
// testdata/smp_tools.golden (go test ./cmd -run SMPToolsGolden -update
// rewrites it).
func TestSMPToolsGolden(t *testing.T) {
	var all strings.Builder
	for _, run := range smpGoldenRuns {
		for _, args := range [][]string{run[1:], append([]string{"--json"}, run[1:]...)} {
			out, errOut, err := runSMPTool(t, run[0], args...)
			fmt.Fprintf(&all, "=== %s %s\n%s", run[0], strings.Join(args, " "), out)
			if errOut != "" {
				fmt.Fprintf(&all, "--- stderr\n%s", errOut)
			}
			if err != nil {
				fmt.Fprintf(&all, "--- error (exit %d)\n%v\n", cmdutil.ExitCode(err), err)
			}
		}
	}
	const path = "testdata/smp_tools.golden"
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile(path, []byte(all.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), all.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
