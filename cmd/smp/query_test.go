package smp

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
)

func TestQueryArgs(t *testing.T) {
	tests := []struct {
		args     []string
		wantAttr string
		wantErr  string
	}{
		{[]string{"SubnGet", "PortInfo", "3"}, "PortInfo", ""},
		{[]string{"subnget", "SMPNodeInfo"}, "NodeInfo", ""},
		{[]string{"PerformanceGet", "PMPortCounters", "3", "-f", "portSelect=1"}, "PortCounters", ""},
		{[]string{"PerfGet", "ClassPortInfo", "3"}, "ClassPortInfo", ""},
		{[]string{"CongestionGet", "CCCongestionInfo", "3"}, "CongestionInfo", ""},
		{[]string{"SubnGet", "PortCounters", "3"}, "", `attribute "PortCounters": not a SMI attribute`},
		{[]string{"SubnSet", "PortInfo", "3"}, "", `method "SubnSet"`},
		{[]string{"PerfGet", "PortCounters", "3", "-f", "portSelect"}, "", "want NAME=VALUE"},
		{[]string{"PerfGet", "PortCounters", "3", "-f", "portSelect=256"}, "", "out of range 0 to 255"},
		{[]string{"PerfGet", "PortCounters", "3", "-f", "nosuch=1"}, "", `PortCounters has no field "nosuch"`},
		{[]string{"SubnGet", "NodeDescription", "3", "-f", "NodeDescription=1"}, "", "only fields up to 64 bits"},
		{[]string{"SubnGet", "PortInfo", "3", "-a", "x"}, "", `invalid attribute modifier "x"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var got *queryOptions
			err := cmdtest.ParseToolArgs(t, "query", func(f *cmdutil.Factory) *cobra.Command {
				return newQueryCmd(f, func(o *queryOptions) error { got = o; return nil })
			}, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if got.Layout.Name != tt.wantAttr {
				t.Errorf("attribute %s, want %s", got.Layout.Name, tt.wantAttr)
			}
		})
	}
}

func TestSetField(t *testing.T) {
	var pc mad.PortCounters
	l := pc.Layout()
	data, _ := pc.MarshalBinary()
	for _, set := range []string{"portSelect=3", "CounterSelect=0xf00f", "LinkDownedCounter=7"} {
		if err := setField(l, data, set); err != nil {
			t.Fatal(err)
		}
	}
	_ = pc.UnmarshalBinary(data)
	if pc.PortSelect != 3 || pc.CounterSelect != 0xf00f || pc.LinkDownedCounter != 7 {
		t.Errorf("got %+v", pc)
	}
}
