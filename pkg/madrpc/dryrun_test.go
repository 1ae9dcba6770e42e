package madrpc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

func TestMethodChangesState(t *testing.T) {
	for m, want := range map[mad.Method]bool{
		mad.MethodGet: false, mad.MethodGetTable: false, mad.MethodGetMulti: false, mad.MethodGetTraceTable: false,
		mad.MethodGetResp: false, mad.MethodGetTableResp: false,
		mad.MethodSet: true, mad.MethodTrap: true, mad.MethodSend: true, mad.MethodDelete: true,
		mad.MethodReport: true, mad.MethodTrapRepress: true, mad.Method(0x1f): true,
	} {
		if got := m.ChangesState(); got != want {
			t.Errorf("%v.ChangesState() = %v, want %v", m, got, want)
		}
	}
}

// portInfoData returns PortInfo data with the fields set.
func portInfoData(t *testing.T, set map[string]uint64) []byte {
	t.Helper()
	data := make([]byte, mad.SMPDataLen)
	l := mad.LayoutByName("PortInfo")
	for name, v := range set {
		f, ok := l.Field(name)
		if !ok {
			t.Fatalf("PortInfo has no field %s", name)
		}
		f.SetValue(data, v)
	}
	return data
}

// TestDryRunTransactor checks a Set and a Trap reach the hook and not the
// transport, while a Get still goes out.
func TestDryRunTransactor(t *testing.T) {
	tr := madtest.New(answer)
	var plans []*madrpc.Plan
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{DryRun: func(_ context.Context, p *madrpc.Plan) error {
		plans = append(plans, p)
		return nil
	}})
	defer x.Close()
	ctx := context.Background()
	if _, err := x.Do(ctx, request(mad.LIDPath(2))); err != nil {
		t.Fatal(err)
	}
	if n := tr.Sends(); n != 1 {
		t.Fatalf("the Get: %d sends, want 1", n)
	}
	before := portInfoData(t, map[string]uint64{"LID": 5, "LinkState": 4, "PhysLinkState": 5, "LinkSpeedEnabled": 7, "LinkWidthEnabled": 3})
	data := append([]byte(nil), before...)
	l := mad.LayoutByName("PortInfo")
	for name, v := range map[string]uint64{"LinkState": 1, "LinkSpeedEnabled": 0, "PhysLinkState": 0} {
		f, _ := l.Field(name)
		f.SetValue(data, v)
	}
	set := &madrpc.Request{Path: mad.DRPath(0, 1, 3), Class: mad.ClassSMI, Method: mad.MethodSet, AttrID: mad.AttrPortInfo,
		AttrMod: 5, Name: "PortInfo", Data: data, Before: before}
	resp, err := x.Do(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.DryRun || resp.Header.Method != mad.MethodGetResp || resp.Header.AttrID != mad.AttrPortInfo {
		t.Errorf("reply: dry run %v, method %v, attribute %#x", resp.DryRun, resp.Header.Method, resp.Header.AttrID)
	}
	if diff := cmp.Diff(data, resp.Data()); diff != "" {
		t.Errorf("reply data is not the request's (-want +got):\n%s", diff)
	}
	trap := &madrpc.Request{Path: mad.LIDPath(1), Class: mad.ClassSMI, Method: mad.MethodTrap, AttrID: mad.AttrNotice, Name: "Notice",
		Data: []byte{0x84, 0, 0, 1, 0, 144, 0, 2}}
	if err := x.Send(context.Background(), trap); err != nil {
		t.Fatal(err)
	}
	if n := tr.Sends(); n != 1 {
		t.Errorf("%d sends after the Set and the Trap, want only the Get's", n)
	}
	down := uint64(1)
	notice := []uint64{1, 4, 1, 144, 2}
	want := []*madrpc.Plan{
		{Request: "SubnSet(PortInfo)", Device: "madtest0", Port: 1, Class: "SMI-DR", DR: []int{0, 1, 3},
			Attribute: "PortInfo", AttrID: mad.AttrPortInfo, AttrMod: 5,
			Fields: []madrpc.PlannedField{{Name: "LinkState", Value: &down, Text: "Down", Was: "Active"}}},
		{Request: "SubnTrap(Notice)", Device: "madtest0", Port: 1, Class: "SMI", LID: 1,
			Attribute: "Notice", AttrID: mad.AttrNotice,
			Fields: []madrpc.PlannedField{
				{Name: "IsGeneric", Value: &notice[0], Text: "1"},
				{Name: "Type", Value: &notice[1], Text: "4"},
				{Name: "ProducerType", Value: &notice[2], Text: "Channel Adapter"},
				{Name: "TrapNumber", Value: &notice[3], Text: "144"},
				{Name: "IssuerLID", Value: &notice[4], Text: "2"},
			}},
	}
	if diff := cmp.Diff(want, plans, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Data" }, cmp.Ignore())); diff != "" {
		t.Errorf("unexpected plans (-want +got):\n%s", diff)
	}
}

// TestDryRunHookError checks the hook's error fails the request, with the
// request named.
func TestDryRunHookError(t *testing.T) {
	tr := madtest.New(answer)
	boom := errors.New("stdout closed")
	x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{DryRun: func(context.Context, *madrpc.Plan) error { return boom }})
	defer x.Close()
	_, err := x.Do(context.Background(), &madrpc.Request{Path: mad.LIDPath(2), Class: mad.ClassPerf, Method: mad.MethodSet,
		AttrID: mad.AttrPortCounters, Name: "PortCounters"})
	if !errors.Is(err, boom) || err.Error() != "PerfSet(PortCounters) to Lid 2: stdout closed" {
		t.Errorf("error %v, want the hook's, wrapped", err)
	}
	if tr.Sends() != 0 {
		t.Errorf("%d sends, want none", tr.Sends())
	}
}

func TestPlannedFields(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	pc := make([]byte, 192)
	pcl := mad.LayoutByName("PortCounters")
	for name, v := range map[string]uint64{"PortSelect": 3, "CounterSelect": 0xffff, "CounterSelect2": 3} {
		f, _ := pcl.Field(name)
		f.SetValue(pc, v)
	}
	cca := make([]byte, 192)
	cca[3] = 0x02                 // ControlMap: SL 1
	cca[4+8], cca[4+8+1] = 0, 150 // SL 1's CCTITimer
	cca[4+8+2] = 1                // its CCTIIncrease
	sp, spBefore := make([]byte, 192), make([]byte, 192)
	spBefore[5*4] = 0x80         // element 5 Valid, before and after
	sp[5*4], sp[5*4+1] = 0xc0, 8 // and now ControlType 1, PacketSize 8
	tests := []struct {
		name         string
		class        mad.Class
		id           mad.AttrID
		data, before []byte
		want         []madrpc.PlannedField
	}{
		{"PortInfo no changes", mad.ClassSMIDirect, mad.AttrPortInfo,
			portInfoData(t, map[string]uint64{"LID": 5}), portInfoData(t, map[string]uint64{"LID": 5, "LinkState": 4, "LinkWidthEnabled": 3}), nil},
		{"PortInfo width and LID", mad.ClassSMI, mad.AttrPortInfo,
			portInfoData(t, map[string]uint64{"LID": 0x1234, "LinkWidthEnabled": 2}), portInfoData(t, map[string]uint64{"LinkWidthEnabled": 3}),
			[]madrpc.PlannedField{
				{Name: "LID", Value: u(0x1234), Text: "4660", Was: "0"},
				{Name: "LinkWidthEnabled", Value: u(2), Text: "4X", Was: "1X or 4X"},
			}},
		{"PortCounters reset", mad.ClassPerf, mad.AttrPortCounters, pc, nil, []madrpc.PlannedField{
			{Name: "PortSelect", Value: u(3), Text: "3"},
			{Name: "CounterSelect", Value: u(0xffff), Text: "0xffff"},
			{Name: "CounterSelect2", Value: u(3), Text: "0x03"},
		}},
		{"CACongestionSetting", mad.ClassCC, mad.AttrCACongestionSetting, cca, nil, []madrpc.PlannedField{
			{Name: "ControlMap", Value: u(2), Text: "0x0002"},
			{Name: "Entry[1].CCTITimer", Value: u(150), Text: "150"},
			{Name: "Entry[1].CCTIIncrease", Value: u(1), Text: "1"},
		}},
		{"SwitchPortCongestionSetting", mad.ClassCC, 0x0015, sp, spBefore, []madrpc.PlannedField{
			{Name: "Entry[5].ControlType", Value: u(1), Text: "1", Was: "0"},
			{Name: "Entry[5].PacketSize", Value: u(8), Text: "8", Was: "0"},
		}},
		{"no layout", mad.ClassSMI, 0xff00, []byte{1, 2, 0, 3, 0, 0}, nil, []madrpc.PlannedField{{Name: "Data", Text: "01020003"}}},
		{"no layout, no change", mad.ClassSMI, 0xff00, []byte{1, 2, 0}, []byte{1, 2, 0, 0}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := madrpc.PlannedFields(tt.class, tt.id, tt.data, tt.before)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected fields (-want +got):\n%s", diff)
			}
		})
	}
}
