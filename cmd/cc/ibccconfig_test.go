package cc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
)

// runIbccconfig runs ibccconfig with args against h and returns its
// output, the dry run's plans included.
func runIbccconfig(t *testing.T, h madtest.Handler, args ...string) (string, error) {
	t.Helper()
	o := cmdtest.ParsedOptions(t, "ibccconfig", newIbccconfigCmd, args)
	var out strings.Builder
	o.IO.Out = &out
	o.Common.Open = cmdtest.FakeOpen(&o.Common, h, 10*time.Millisecond, &out)
	o.Common.Ctx = context.Background()
	err := ibccconfigRun(o)
	return out.String(), err
}

// TestIbccconfigPlans pins the Set each operation builds, as its dry run
// shows it: the attribute, its modifier and the fields it writes.
func TestIbccconfigPlans(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"key info", []string{"CK", "3", "0x1234", "1", "5", "0"},
			"dry-run: CCSet(CongestionKeyInfo) from=madtest0/1 lid=3 attrmod=0x0 CCKey=0x0000000000001234 CCKeyProtectBit=1 CCKeyLeasePeriod=5\n"},
		{"switch", []string{"SS", "3", "0x1F", "0x1FFFFFFFFF", "0x0", "0xF", "8", "0", "1:2", "1"},
			"dry-run: CCSet(SwitchCongestionSetting) from=madtest0/1 lid=3 attrmod=0x0 ControlMap=0x0000001f " +
				"VictimMask=0000000000000000000000000000000000000000000000000000001fffffffff Threshold=0x0f PacketSize=8 CSReturnDelay=0x4002 MarkingRate=1\n"},
		{"switch port 2", []string{"SP", "3", "2", "1", "0", "0x3", "4", "9"},
			"dry-run: CCSet(SwitchPortCongestionSetting) from=madtest0/1 lid=3 attrmod=0x0 Entry[2].ControlType=0 " +
				"Entry[2].PacketSize=4 Entry[2].CongParmMarkingRate=9\n"},
		{"switch port 40", []string{"SP", "3", "40", "1", "1", "0x2", "4", "9"},
			"dry-run: CCSet(SwitchPortCongestionSetting) from=madtest0/1 lid=3 attrmod=0x1 Entry[8].ControlType=1 " +
				"Entry[8].Threshold=0x02 Entry[8].PacketSize=4 Entry[8].CongParmMarkingRate=9\n"},
		{"ca", []string{"CS", "3", "1", "0x5", "150", "1", "2", "3"},
			"dry-run: CCSet(CACongestionSetting) from=madtest0/1 lid=3 attrmod=0x0 PortControl=0x0001 ControlMap=0x0005 " +
				"Entry[0].CCTITimer=150 Entry[0].CCTIIncrease=1 Entry[0].TriggerThreshold=2 Entry[0].CCTIMin=3 " +
				"Entry[2].CCTITimer=150 Entry[2].CCTIIncrease=1 Entry[2].TriggerThreshold=2 Entry[2].CCTIMin=3\n"},
		{"table", []string{"CT", "3", "66", "1", "1:2", "0:5", "3:16383"},
			"dry-run: CCSet(CongestionControlTable) from=madtest0/1 lid=3 attrmod=0x1 CCTILimit=66 Entry[0].CCTShift=1 Entry[0].CCTMultiplier=2 " +
				"Entry[1].CCTMultiplier=5 Entry[2].CCTShift=3 Entry[2].CCTMultiplier=16383\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c madtest.MethodCounter
			got, err := runIbccconfig(t, c.Count(ccFake(60, 0)), append([]string{"--dry-run"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Sets() != 0 {
				t.Errorf("%d Sets reached the port", c.Sets())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIbccconfigJSONKeys(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"CK", "3", "1", "0", "0", "0"}, []string{"attributeModifier", "operation", "set", "target"}},
		{[]string{"--dry-run", "CK", "3", "1", "0", "0", "0"}, []string{"attributeModifier", "dryRun[].attribute",
			"dryRun[].attributeId", "dryRun[].attributeModifier", "dryRun[].class", "dryRun[].device", "dryRun[].fields[].name",
			"dryRun[].fields[].text", "dryRun[].fields[].value", "dryRun[].lid", "dryRun[].port", "dryRun[].request",
			"operation", "set", "target"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := runIbccconfig(t, ccFake(8, 0), append([]string{"--json"}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := jsonkeys.Paths([]byte(out))
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected JSON keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIbccconfigErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"CK", "3", "1", "0", "0"}, "invalid number of parameters for CongestionKeyInfo: 3, want 4"},
		{[]string{"CK", "3", "1", "2", "0", "0"}, `CC_KeyProtectBit "2"`},
		{[]string{"SS", "3", "1", "0xZ", "0", "0", "0", "0", "0:0", "0"}, `mask "0Z": invalid hex digit`},
		{[]string{"SS", "3", "1", "0", "0", "0", "0", "0", "00", "0"}, "ccts are formatted shift:multiplier"},
		{[]string{"SP", "3", "9", "1", "0", "0", "0", "0"}, "invalid port number 9: the switch has 8 ports"},
		{[]string{"CT", "3", "66", "0", "1:2"}, "invalid number of cct entries input given ccti_limit 66 and index 0: 1"},
		{[]string{"CT", "3", "0", "0", "4:0"}, `entry "4:0": shift`},
		{[]string{"nosuch", "3"}, "operation 'nosuch' not supported"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var err error
			if tt.args[0] == "nosuch" {
				err = cmdtest.ParseToolArgs(t, "ibccconfig", func(f *cmdutil.Factory) *cobra.Command {
					return newIbccconfigCmd(f, func(*ibccconfigOptions) error { return nil })
				}, tt.args)
			} else {
				_, err = runIbccconfig(t, ccFake(8, 0), tt.args...)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
