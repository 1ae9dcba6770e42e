package perf

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// TestDryRunPerfTools runs perfquery and ibclearerrors with --dry-run against the fake.
func TestDryRunPerfTools(t *testing.T) {
	cmdtest.RunDryRunCases(t, []cmdtest.DryRunCase{
		cmdtest.NewDryRunCase("perfquery -r", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--dry-run", "-r", "2", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return perfqueryRun(o)
		}, true, "PortXmitWait:....................0\n"+
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x01\n", true),
		cmdtest.NewDryRunCase("perfquery -R -x", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--dry-run", "-R", "-x", "2", "1"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
				return ff.Transactor(&o.Common, out), cmdtest.DryRunLocal, nil
			}
			return perfqueryRun(o)
		}, true, "dry-run: PerfSet(PortCountersExtended) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x00001fff\n", false),
		cmdtest.NewDryRunCase("ibclearerrors", func(t *testing.T, ff *cmdtest.DryRunFabric, out *bytes.Buffer) error {
			o := fakeNetCheck(t, "ibclearerrors", []string{"--dry-run"})
			o.IO.Out = out
			o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) { return ff.Transactor(&o.Common, out), nil, nil }
			return netCheckRun(o)
		}, true, `dry-run: PerfSet(PortCounters) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0x0fff
dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0x0fff

*** WARNING ***: this command is deprecated; Please use "ibqueryerrors -k"

## Summary: 2 nodes cleared 0 errors
`, false),
	})
}

// TestDryRunJSON checks the plans go into the tool's JSON document, and
// the reply a dry run makes up is not reported as done.
func TestDryRunJSON(t *testing.T) {
	ff := &cmdtest.DryRunFabric{}
	var out bytes.Buffer
	o := cmdtest.ParsedOptions(t, "perfquery", newPerfqueryCmd, []string{"--dry-run", "--json", "-R", "2", "1"})
	o.IO.Out = &out
	o.Common.Open = func() (*madrpc.Transactor, *rdma.Port, error) {
		return ff.Transactor(&o.Common, &out), cmdtest.DryRunLocal, nil
	}
	if err := perfqueryRun(o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ResetPorts []int         `json:"resetPorts"`
		DryRun     []madrpc.Plan `json:"dryRun"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	one, ffff := uint64(1), uint64(0xffff)
	want := []madrpc.Plan{{Request: "PerfSet(PortCounters)", Device: "madtest0", Port: 1, Class: "PerfMgt", LID: 2,
		Attribute: "PortCounters", AttrID: mad.AttrPortCounters, Fields: []madrpc.PlannedField{
			{Name: "PortSelect", Value: &one, Text: "1"},
			{Name: "CounterSelect", Value: &ffff, Text: "0xffff"},
			{Name: "CounterSelect2", Value: &one, Text: "0x01"},
		}}}
	if diff := cmp.Diff(want, doc.DryRun); diff != "" {
		t.Errorf("unexpected dryRun (-want +got):\n%s", diff)
	}
	if doc.ResetPorts != nil || ff.Changes != 0 {
		t.Errorf("resetPorts %v, %d Sets sent; want none", doc.ResetPorts, ff.Changes)
	}
}
