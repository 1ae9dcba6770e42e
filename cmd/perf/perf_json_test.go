package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// perfDocKeys decodes a JSON document and lists the paths of its keys,
// "results[].counters.portSelect": a list's elements add "[]", and an
// empty object or list is listed itself, so that its key is pinned too.
func perfDocKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	seen := map[string]bool{}
	var visit func(prefix string, v any)
	visit = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, e := range m {
				if prefix != "" {
					k = prefix + "." + k
				}
				visit(k, e)
			}
			return
		}
		if l, ok := v.([]any); ok && len(l) > 0 {
			for _, e := range l {
				visit(prefix+"[]", e)
			}
			return
		}
		seen[prefix] = true
	}
	visit("", v)
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withPrefix returns names with prefix before each.
func withPrefix(prefix string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// portCountersKeys are PortCounters' JSON keys.
var portCountersKeys = []string{"counterSelect", "counterSelect2", "excessiveBufferOverrunErrors", "linkDownedCounter",
	"linkErrorRecoveryCounter", "localLinkIntegrityErrors", "portRcvConstraintErrors", "portRcvData", "portRcvErrors",
	"portRcvPkts", "portRcvRemotePhysicalErrors", "portRcvSwitchRelayErrors", "portSelect", "portXmitConstraintErrors",
	"portXmitData", "portXmitDiscards", "portXmitPkts", "portXmitWait", "qp1Dropped", "symbolErrorCounter", "vl15Dropped"}

// errorCounterKeys are the error counters' names as --json gives them.
var errorCounterKeys = []string{"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
	"PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped"}

// sortedKeys sorts the key lists given and returns them as one.
func sortedKeys(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.Strings(out)
	return out
}

// TestPerfJSONKeys pins the keys of the performance tools' --json
// documents: a change of a key shows here.
func TestPerfJSONKeys(t *testing.T) {
	dryRunPlanKeys := []string{"dryRun[].attribute", "dryRun[].attributeId", "dryRun[].attributeModifier", "dryRun[].class",
		"dryRun[].device", "dryRun[].fields[].name", "dryRun[].fields[].text", "dryRun[].fields[].value", "dryRun[].lid",
		"dryRun[].port", "dryRun[].request"}
	finding := []string{"findings[].check", "findings[].lid", "findings[].ok", "findings[].target"}
	tests := []struct {
		name string
		run  func(t *testing.T, out *bytes.Buffer) error
		want []string
	}{
		{"perfquery -r", func(t *testing.T, out *bytes.Buffer) error {
			ff := &cmdtest.DryRunFabric{}
			o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--json", "-r", "2", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return perfqueryRun(o)
		}, sortedKeys([]string{"capabilityMask", "capabilityMask2", "resetPorts[]", "results[].attribute", "results[].port", "target"},
			withPrefix("results[].counters.", portCountersKeys...))},
		{"perfquery --dry-run -R", func(t *testing.T, out *bytes.Buffer) error {
			ff := &cmdtest.DryRunFabric{}
			o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--json", "--dry-run", "-R", "2", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return perfqueryRun(o)
		}, sortedKeys([]string{"capabilityMask", "capabilityMask2", "results", "target"}, dryRunPlanKeys)},
		{"ibqueryerrors --data --details", func(t *testing.T, out *bytes.Buffer) error {
			s, err := runQueryErrors(t, &errorsPMA{}, "--json", "--data", "--details", "-s", "VL15Dropped")
			out.WriteString(s)
			return err
		}, sortedKeys([]string{"badNodes", "badPorts", "nodesChecked", "pmaQueryFailures",
			"ports[].counters.PortRcvErrors", "ports[].counters.SymbolErrorCounter",
			"ports[].description", "ports[].nodeGUID", "ports[].port", "ports[].portGUID",
			"portsChecked", "suppressed[]", "thresholds"})},
		{"ibqueryerrors --dry-run -k", func(t *testing.T, out *bytes.Buffer) error {
			s, err := runQueryErrors(t, &errorsPMA{}, "--json", "--dry-run", "-k", "--counters")
			out.WriteString(s)
			return err
		}, sortedKeys([]string{"badNodes", "badPorts", "nodesChecked", "pmaQueryFailures",
			"ports[].counters.PortMulticastRcvPkts", "ports[].counters.PortMulticastXmitPkts",
			"ports[].counters.PortUnicastRcvPkts", "ports[].counters.PortUnicastXmitPkts", "ports[].counters.PortRcvData", "ports[].counters.PortRcvPkts", "ports[].counters.PortXmitData", "ports[].counters.PortXmitPkts",
			"ports[].description", "ports[].nodeGUID", "ports[].port", "ports[].portGUID",
			"portsChecked", "suppressed", "thresholds"}, dryRunPlanKeys)},
		{"ibswportwatch", func(t *testing.T, out *bytes.Buffer) error {
			ff := &cmdtest.DryRunFabric{}
			o := cmdtest.ParsedOptions(t, "ibswportwatch", func(f *cmdutil.Factory, runF func(*ibswportwatchOptions) error) *cobra.Command {
				return newIbswportwatchCmd(f, "ibswportwatch", runF)
			}, []string{"--json", "-n", "1", "-b", "2", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			o.Sleep = func(context.Context, time.Duration) error { return nil }
			return ibswportwatchRun(o)
		}, sortedKeys([]string{"pauseSeconds", "port", "target"},
			withPrefix("cycles[].counters.", append(errorCounterKeys, "PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts")...),
			withPrefix("cycles[].rates.", "LinkErrorRecoveryCounter", "LocalLinkIntegrityErrors", "PortRcvData", "PortRcvErrors",
				"PortRcvPkts", "PortXmitData", "PortXmitDiscards", "PortXmitPkts", "SymbolErrorCounter"))},
		{"ibcheckerrs", func(t *testing.T, out *bytes.Buffer) error {
			ff := &cmdtest.DryRunFabric{}
			o := fakeNodeCheck(t, "ibcheckerrs", []string{"--json", "2", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			return nodeCheckRun(o)
		}, sortedKeys(finding, []string{"findings[].port"},
			withPrefix("findings[].counters.", errorCounterKeys...))},
		{"ibcheckerrs -s", func(t *testing.T, out *bytes.Buffer) error {
			o := fakeNodeCheck(t, "ibcheckerrs", []string{"--json", "-s"})
			o.IO.Out = out
			return nodeCheckRun(o)
		}, withPrefix("thresholds.", "ExcessiveBufferOverrunErrors", "LinkDownedCounter", "LinkErrorRecoveryCounter",
			"LocalLinkIntegrityErrors", "PortRcvConstraintErrors", "PortRcvErrors", "PortRcvRemotePhysicalErrors",
			"PortRcvSwitchRelayErrors", "PortXmitConstraintErrors", "PortXmitDiscards", "SymbolErrorCounter", "VL15Dropped")},
		{"ibcheckerrors", func(t *testing.T, out *bytes.Buffer) error {
			ff := &cmdtest.DryRunFabric{}
			o := fakeNetCheck(t, "ibcheckerrors", []string{"--json"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			return netCheckRun(o)
		}, sortedKeys(finding, []string{"findings[].port", "summary.nodesChecked", "summary.portsChecked"},
			withPrefix("findings[].counters.", errorCounterKeys...))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_ = tt.run(t, &out) // findings and failed checks exit non-zero
			if diff := cmp.Diff(tt.want, perfDocKeys(t, out.Bytes())); diff != "" {
				t.Errorf("unexpected JSON keys (-want +got):\n%s\n%s", diff, out.String())
			}
		})
	}
}

// fakeNodeCheck parses a per-node script's arguments.
func fakeNodeCheck(t *testing.T, name string, args []string) *nodeCheckOptions {
	t.Helper()
	for _, tool := range nodeCheckTools {
		if tool.name == name {
			return cmdtest.ParsedOptions(t, name, func(f *cmdutil.Factory, runF func(*nodeCheckOptions) error) *cobra.Command {
				return newNodeCheckCmd(f, tool, runF)
			}, args)
		}
	}
	t.Fatalf("no script %s", name)
	return nil
}
