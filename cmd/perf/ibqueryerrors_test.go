package perf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// errorsPMA answers PerfMgt Gets as the PMAs of errorsFabric would: the
// switch (LID 1) with AllPortSelect and errors on port 2, the CAs without
// it, the CA of LID 3 with PortCountersExtended, the CA of LID 2 with
// symbol errors. It answers the lower LIDs later, so the nodes reported
// first are read last, and keeps every Set it is sent.
type errorsPMA struct {
	mu         sync.Mutex
	gets, sets int
	// setMADs are the Sets as "lid attrid attrmod fields" lines.
	setMADs []string
}

func (a *errorsPMA) handle(req *mad.Packet) []mad.Packet {
	var h mad.Header
	h.UnmarshalBinary(req.MAD)
	lid := req.Addr.LID
	port := req.MAD[mad.SMPDataOffset+1]
	a.mu.Lock()
	if h.Method.ChangesState() {
		a.sets++
		fields := madrpc.PlannedFields(h.MgmtClass, h.AttrID, req.MAD[mad.SMPDataOffset:], nil)
		a.setMADs = append(a.setMADs, setLine(lid, h.AttrID, h.AttrMod, fields))
	} else {
		a.gets++
	}
	a.mu.Unlock()
	time.Sleep(time.Duration(5-lid) * 2 * time.Millisecond)
	var data []byte
	switch h.AttrID {
	case mad.AttrClassPortInfo:
		caps := mad.PMAXmitWait
		switch lid {
		case 1:
			caps |= mad.PMAAllPortSelect
		case 3:
			caps |= mad.PMAExtendedWidth
		}
		data, _ = (&mad.ClassPortInfo{CapabilityMask: uint16(caps)}).MarshalBinary()
	case mad.AttrPortCounters:
		pc := mad.PortCounters{PortSelect: port}
		switch {
		case lid == 1 && (port == 2 || port == mad.AllPortSelect):
			pc.PortRcvErrors = 2
		case lid == 2:
			pc.SymbolErrorCounter = 5
		}
		data, _ = pc.MarshalBinary()
	case mad.AttrPortCountersExtended:
		pce := mad.PortCountersExtended{PortSelect: port, PortXmitData: 100}
		data, _ = pce.MarshalBinary()
	}
	return []mad.Packet{madtest.Reply(req, 0, mad.SMPDataOffset, data)}
}

// errorsFakeFabric is a 3-port switch of LID 1 with CAs of LIDs 2, 3
// and 4 on its ports 1 to 3.
func errorsFakeFabric() *subnet.Fabric {
	sw := &subnet.Node{GUID: 0x200000, Type: mad.NodeTypeSwitch, NumPorts: 3, Ports: make([]*subnet.Port, 4), SMALID: 1, Desc: "Switch1"}
	fab := &subnet.Fabric{From: sw}
	for num := 0; num <= 3; num++ {
		sw.Ports[num] = &subnet.Port{Node: sw, Num: num, GUID: 0x200000, BaseLID: 1}
	}
	for i := 1; i <= 3; i++ {
		guid := rdma.GUID(0x100000 * (i + 2))
		ca := &subnet.Node{GUID: guid, Type: mad.NodeTypeCA, NumPorts: 1, Ports: make([]*subnet.Port, 2), Desc: fmt.Sprintf("Hca%d", i)}
		ca.Info.PortGUID = guid + 1
		ca.Ports[1] = &subnet.Port{Node: ca, Num: 1, GUID: guid + 1, BaseLID: rdma.LID(i + 1), Remote: sw.Ports[i]}
		sw.Ports[i].Remote = ca.Ports[1]
		fab.Nodes = append([]*subnet.Node{ca}, fab.Nodes...)
	}
	// All gives them in the order found: the switch, then the CAs by
	// LID.
	fab.Nodes = append(fab.Nodes, sw)
	return fab
}

// setLine describes a Set: its LID, attribute, modifier and the fields
// it writes.
func setLine(lid rdma.LID, attr mad.AttrID, mod uint32, fields []madrpc.PlannedField) string {
	line := fmt.Sprintf("%d %#04x %#x", lid, uint16(attr), mod)
	for _, f := range fields {
		line += " " + f.Name + "=" + f.Text
	}
	return line
}

// runQueryErrors runs ibqueryerrors with args on errorsFakeFabric and pma.
func runQueryErrors(t *testing.T, pma *errorsPMA, args ...string) (string, error) {
	t.Helper()
	o := cmdtest.ParsedOptions(t, "ibqueryerrors", newIbqueryerrorsCmd, append([]string{"--skip-sl", "--threshold-file", "/nonexistent"}, args...))
	var out, errOut bytes.Buffer
	o.IO.Out, o.IO.ErrOut = &out, &errOut
	o.Discover = func([]uint8, int) (*subnet.Fabric, error) { return errorsFakeFabric(), nil }
	o.Common.Open = cmdtest.FakeOpen(&o.Common, pma.handle, time.Second, &out)
	o.ShareCPUs = nil
	err := ibqueryerrorsRun(o)
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

// TestIbqueryerrorsDryRun checks -k and -K under --dry-run: the Gets go
// out as without it, no Set does, the report is the one a run without
// --dry-run prints, and each node's resets follow its report, in the
// report's order though the nodes are read at once.
func TestIbqueryerrorsDryRun(t *testing.T) {
	// The reports of the switch and Hca1; Hca2 and Hca3 have none.
	const switchReport = `Errors for 0x200000 "Switch1"
   GUID 0x200000 port ALL: [PortRcvErrors == 2]
   GUID 0x200000 port 2: [PortRcvErrors == 2]
`
	const hca1Report = `Errors for "Hca1"
   GUID 0x300001 port 1: [SymbolErrorCounter == 5]
`
	const summary = `
## Summary: 4 nodes checked, 2 bad nodes found
##          6 ports checked, 2 ports have errors beyond threshold
## (null)
## Suppressed:
`
	tests := []struct {
		args []string
		// plans are the plan lines after each node's report: the
		// switch's, Hca1's, Hca2's, Hca3's.
		plans [4]string
	}{
		{[]string{"-k"}, [4]string{
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0x0fff CounterSelect2=0x01\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0x0fff CounterSelect2=0x01\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0x0fff CounterSelect2=0x01\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=4 attrmod=0x0 PortSelect=1 CounterSelect=0x0fff CounterSelect2=0x01\n",
		}},
		{[]string{"-K"}, [4]string{
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0xf000\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xf000\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0xf000\n" +
				"dry-run: PerfSet(PortCountersExtended) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0x00ff\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=4 attrmod=0x0 PortSelect=1 CounterSelect=0xf000\n",
		}},
		{[]string{"-k", "-K", "--details"}, [4]string{
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0xffff CounterSelect2=0x01\n" +
				"dry-run: PerfSet(PortXmitDiscardDetails) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0x000f\n" +
				"dry-run: PerfSet(PortRcvErrorDetails) from=madtest0/1 lid=1 attrmod=0x0 PortSelect=255 CounterSelect=0x003f\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x01\n" +
				"dry-run: PerfSet(PortXmitDiscardDetails) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0x000f\n" +
				"dry-run: PerfSet(PortRcvErrorDetails) from=madtest0/1 lid=2 attrmod=0x0 PortSelect=1 CounterSelect=0x003f\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x01\n" +
				"dry-run: PerfSet(PortXmitDiscardDetails) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0x000f\n" +
				"dry-run: PerfSet(PortRcvErrorDetails) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0x003f\n" +
				"dry-run: PerfSet(PortCountersExtended) from=madtest0/1 lid=3 attrmod=0x0 PortSelect=1 CounterSelect=0x00ff\n",
			"dry-run: PerfSet(PortCounters) from=madtest0/1 lid=4 attrmod=0x0 PortSelect=1 CounterSelect=0xffff CounterSelect2=0x01\n" +
				"dry-run: PerfSet(PortXmitDiscardDetails) from=madtest0/1 lid=4 attrmod=0x0 PortSelect=1 CounterSelect=0x000f\n" +
				"dry-run: PerfSet(PortRcvErrorDetails) from=madtest0/1 lid=4 attrmod=0x0 PortSelect=1 CounterSelect=0x003f\n",
		}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			sent := &errorsPMA{}
			sentOut, err := runQueryErrors(t, sent, tt.args...)
			if cmdutil.ExitCode(err) != cmdutil.ExitFindings {
				t.Fatalf("without --dry-run: %v, want findings", err)
			}
			if diff := cmp.Diff(switchReport+hca1Report+summary, sentOut); diff != "" {
				t.Errorf("unexpected output without --dry-run (-want +got):\n%s", diff)
			}
			pma := &errorsPMA{}
			got, err := runQueryErrors(t, pma, append([]string{"--dry-run"}, tt.args...)...)
			if cmdutil.ExitCode(err) != cmdutil.ExitFindings {
				t.Fatalf("%v, want findings (exit 1)", err)
			}
			if pma.sets != 0 || pma.gets != sent.gets {
				t.Errorf("%d Gets and %d Sets reached the transport, want %d Gets and none", pma.gets, pma.sets, sent.gets)
			}
			want := switchReport + tt.plans[0] + hca1Report + tt.plans[1] + tt.plans[2] + tt.plans[3] + summary
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			if n := strings.Count(got, "dry-run: "); n != sent.sets {
				t.Errorf("%d plans; %d Sets sent without --dry-run", n, sent.sets)
			}
		})
	}
}

// TestIbqueryerrorsDryRunJSON checks the plans of a --json dry run are in
// the document, in the report's order, and are the Sets a run without
// --dry-run sends.
func TestIbqueryerrorsDryRunJSON(t *testing.T) {
	sent := &errorsPMA{}
	if _, err := runQueryErrors(t, sent, "-k", "-K"); cmdutil.ExitCode(err) != cmdutil.ExitFindings {
		t.Fatalf("without --dry-run: %v, want findings", err)
	}
	pma := &errorsPMA{}
	out, err := runQueryErrors(t, pma, "--dry-run", "--json", "-k", "-K")
	if cmdutil.ExitCode(err) != cmdutil.ExitFindings || pma.sets != 0 {
		t.Fatalf("%v, %d Sets sent; want findings and none", err, pma.sets)
	}
	var doc struct {
		BadPorts int           `json:"badPorts"`
		DryRun   []madrpc.Plan `json:"dryRun"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var lids []rdma.LID
	var planned []string
	for _, p := range doc.DryRun {
		lids = append(lids, p.LID)
		planned = append(planned, setLine(p.LID, p.AttrID, p.AttrMod, p.Fields))
	}
	if diff := cmp.Diff([]rdma.LID{1, 2, 3, 3, 4}, lids); diff != "" || doc.BadPorts != 2 {
		t.Errorf("badPorts %d, plans to LIDs (-want +got):\n%s", doc.BadPorts, diff)
	}
	sort.Strings(planned)
	sort.Strings(sent.setMADs)
	if diff := cmp.Diff(sent.setMADs, planned); diff != "" {
		t.Errorf("plans against the Sets sent without --dry-run (-sent +planned):\n%s", diff)
	}
}
