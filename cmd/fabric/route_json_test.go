package fabric

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/pkg/endport"
)

// fabricJSONKeys returns the sorted key paths of a JSON document's leaves
// and empty containers: "entries[].lid", an array's elements as "[]".
func fabricJSONKeys(t *testing.T, doc string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v in %s", err, doc)
	}
	seen := map[string]bool{}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				seen[at+"{}"] = true
			}
			for k, e := range v {
				walk(strings.TrimPrefix(at+"."+k, "."), e)
			}
		case []any:
			if len(v) == 0 {
				seen[at+"[]"] = true
			}
			for _, e := range v {
				walk(at+"[]", e)
			}
		default:
			seen[at] = true
		}
	}
	walk("", v)
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestFabricToolsJSONKeys pins the --json keys of the routing tools, so
// that a change of the types that render them shows here.
func TestFabricToolsJSONKeys(t *testing.T) {
	ff := routeFake(t)
	fab := fakeTwoSwitches(t, nil)
	topo, _, err := runIbnetdiscover(t, fab, "-g")
	if err != nil {
		t.Fatal(err)
	}
	ibroute := func(args ...string) (string, string, error) {
		return runWith(t, newIbrouteCmd, func(o *ibrouteOptions) error {
			o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
			return ibrouteRun(o)
		}, args...)
	}
	dumpFts := func(multicast bool, args ...string) (string, string, error) {
		if multicast {
			return runDumpFts(t, ff, fab, "dump_mfts", args...)
		}
		return runDumpFts(t, ff, fab, "dump_fts", args...)
	}
	ibtracert := func(args ...string) (string, string, error) {
		return runWith(t, newIbtracertCmd, func(o *ibtracertOptions) error {
			o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
			return ibtracertRun(o)
		}, args...)
	}
	dir := t.TempDir()
	ibfindnodesusing := func(args ...string) (string, string, error) {
		return runWith(t, newIbfindnodesusingCmd, func(o *ibfindnodesusingOptions) error {
			o.CacheDir = dir
			o.Topology = func() ([]byte, error) { return []byte(topo), nil }
			o.Common.Open = cmdtest.NoPort(fakeTransactor(ff))
			o.Routes = func(guid string) ([]lftEntry, error) {
				// The fake has no SA to resolve a GUID: its switches'
				// LIDs are 1 and 2.
				lid := map[string]string{"0x0000000000200000": "1", "0x0000000000200001": "2"}[guid]
				t, err := endport.ParseTarget(lid, endport.LID)
				if err != nil {
					return nil, err
				}
				return o.routesOf(t)
			}
			return ibfindnodesusingRun(o)
		}, args...)
	}
	ibidsverify := func(args ...string) (string, string, error) {
		return runWith(t, newIbidsverifyCmd, func(o *ibidsverifyOptions) error {
			o.CacheDir = dir
			o.Topology = func() ([]byte, error) { return []byte(topo), nil }
			return ibidsverifyRun(o)
		}, args...)
	}
	hop := []string{"kind", "lid", "nodeDescription", "nodeGUID", "nodeType", "port"}
	traceHops := func(extra ...string) []string {
		var keys []string
		for _, k := range append(append([]string{}, hop...), extra...) {
			keys = append(keys, "traces[].hops[]."+k)
		}
		keys = append(keys, "traces[].destination", "traces[].source")
		slices.Sort(keys)
		return keys
	}
	tests := []struct {
		name string
		run  func() (string, string, error)
		want []string
	}{
		{"ibroute", func() (string, string, error) { return ibroute("--json", "1") },
			[]string{"endLid", "entries[].destination", "entries[].lid", "entries[].port", "entries[].valid", "nodeDescription", "nodeGUID", "startLid", "switch"}},
		{"ibroute -M", func() (string, string, error) { return ibroute("--json", "-M", "1") },
			[]string{"endMlid", "entries[].mlid", "entries[].portMasks[]", "entries[].ports[]", "nodeDescription", "nodeGUID", "startMlid", "switch"}},
		{"dump_fts", func() (string, string, error) { return dumpFts(false, "--json") },
			[]string{"[].description", "[].entries[].destination", "[].entries[].lid", "[].entries[].port", "[].entries[].portGUID", "[].lid", "[].nodeGUID", "[].path"}},
		{"dump_mfts", func() (string, string, error) { return dumpFts(true, "--json") },
			[]string{"[].description", "[].entries[].lid", "[].entries[].ports[]", "[].lid", "[].nodeGUID", "[].path"}},
		{"ibtracert", func() (string, string, error) { return ibtracert("--json", "3", "5") },
			traceHops("outPort", "portGUID")},
		{"ibtracert -m", func() (string, string, error) { return ibtracert("--json", "-m", "0xc000", "3", "5") },
			sorted(append(traceHops("outPort"), "traces[].mlid"))},
		{"ibfindnodesusing", func() (string, string, error) { return ibfindnodesusing("--json", "-R", "0x200000", "3") },
			[]string{"description", "port", "remoteDescription", "remoteGUID", "remotePort", "routedIn[]", "routedOut[]", "switchGUID"}},
		{"ibidsverify", func() (string, string, error) { return ibidsverify("--json", "-R") },
			[]string{"findings[]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := tt.run()
			if err != nil {
				t.Fatalf("%v\nstderr: %s", err, errOut)
			}
			if diff := cmp.Diff(tt.want, fabricJSONKeys(t, out)); diff != "" {
				t.Errorf("unexpected JSON keys (-want +got):\n%s\n%s", diff, out)
			}
			// The whole document too: which hop has which keys, and the
			// values' forms.
			cmdtest.CheckSysfsGolden(t, filepath.Join("testdata", "fabricjson", strings.ReplaceAll(tt.name, " ", "")+".json"), out)
		})
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
