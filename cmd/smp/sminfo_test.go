package smp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
)

func TestSminfo(t *testing.T) {
	tests := []struct {
		args []string
		want string
		// wantSMInfo is the method and SMInfo the SM received last.
		wantMethod mad.Method
		wantMod    uint32
		wantSMInfo mad.SMInfo
	}{
		{nil, "sminfo: sm lid 1 sm guid 0x200000, activity count 7 priority 1 state 3 SMINFO_MASTER\n",
			mad.MethodGet, 0, mad.SMInfo{SMState: 2}},
		{[]string{"-D", "0,1"}, "sminfo: sm lid 0 sm guid 0x100000, activity count 3 priority 2 state 2 SMINFO_STANDBY\n",
			mad.MethodGet, 0, mad.SMInfo{SMState: 2}},
		// A modifier sends a Set with -s, -p and -a; the SM answers with
		// what it now holds.
		{[]string{"-s", "1", "-p", "9", "-a", "0x10", "2", "5"}, "sminfo: sm lid 2 sm guid 0x0, activity count 16 priority 9 state 1 SMINFO_DISCOVER\n",
			mad.MethodSet, 5, mad.SMInfo{ActCount: 16, Priority: 9, SMState: 1}},
		// python-rdma's --sminfo_smkey goes in the SMInfo, Get and Set.
		{[]string{"--sminfo_smkey", "0x1234"}, "sminfo: sm lid 1 sm guid 0x200000, activity count 7 priority 1 state 3 SMINFO_MASTER\n",
			mad.MethodGet, 0, mad.SMInfo{SMKey: 0x1234, SMState: 2}},
		{[]string{"--sminfo_smkey", "7", "-s", "1", "2", "5"}, "sminfo: sm lid 2 sm guid 0x0, activity count 0 priority 0 state 1 SMINFO_DISCOVER\n",
			mad.MethodSet, 5, mad.SMInfo{SMKey: 7, SMState: 1}},
		// A dry run reads, prints and plans the Set without sending it.
		{[]string{"--dry-run", "-p", "3", "2", "1"}, "sminfo: sm lid 2 sm guid 0x200000, activity count 7 priority 1 state 3 SMINFO_MASTER\n" +
			"dry-run: SubnSet(SMInfo) from=madtest0/1 lid=2 attrmod=0x1 Priority=3 SMState=2\n",
			mad.MethodGet, 0, mad.SMInfo{Priority: 3, SMState: 2}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f := newSMPFabric()
			got, _, err := smpToolRunners["sminfo"](t, f.handle, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			var last madtest.SMARequest
			for _, sma := range []*madtest.SMA{f.sw, f.ca} {
				for _, r := range sma.Requests() {
					if r.AttrID == mad.AttrSMInfo {
						last = r
					}
				}
			}
			var sent mad.SMInfo
			if err := sent.UnmarshalBinary(last.Data); err != nil {
				t.Fatal(err)
			}
			if last.Method != tt.wantMethod || last.Mod != tt.wantMod {
				t.Errorf("sent %v modifier %d, want %v %d", last.Method, last.Mod, tt.wantMethod, tt.wantMod)
			}
			if diff := cmp.Diff(tt.wantSMInfo, sent); diff != "" {
				t.Errorf("SMInfo sent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSminfoArgs(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-s", "4"}, `invalid state "4": out of range 0 to 3`},
		{[]string{"-p", "x"}, `invalid priority "x"`},
		{[]string{"--sminfo_smkey", "0x10000000000000000"}, `invalid sminfo_smkey "0x10000000000000000"`},
		{[]string{"1", "0x1ffffffff"}, `invalid modifier "0x1ffffffff"`},
		{[]string{"1", "2", "3"}, "expected at most 2 argument(s)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			err := cmdtest.ParseToolArgs(t, "sminfo", func(f *cmdutil.Factory) *cobra.Command {
				return newSminfoCmd(f, func(*sminfoOptions) error { return nil })
			}, tt.args)
			cmdtest.CheckParseErr(t, err, tt.wantErr)
		})
	}
}
