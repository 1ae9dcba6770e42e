package e2e

import (
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/simfabric"
)

// TestIbccconfigMatchesReference checks the Sets ibsim accepts succeed
// silently, as infiniband-diags' do, and the ones it refuses fail in one
// line. ibsim hands CC MADs to its SMP handlers (it masks the class to its
// low four bits), so a CC Set overwrites the SMP attribute with the same
// ID (CongestionKeyInfo 0x12 is SwitchInfo): every Set gets fresh fabrics,
// one for infiniband-diags and one for ibtool, and none touches the shared
// one.
func TestIbccconfigMatchesReference(t *testing.T) {
	fresh := func(t *testing.T) *simfabric.Fabric {
		return simfabric.StartForTest(t, simfabric.Options{Net: simfabric.Net2sw2path4hca})
	}
	for _, a := range [][]string{
		{"CACongestionSetting", "2", "0", "0x3", "150", "1", "0", "0"},
		{"CT", "2", "3", "0", "0:0", "0:1", "1:2", "2:3"},
	} {
		t.Run(strings.Join(a, " "), func(t *testing.T) {
			out, errOut, exit, err := fresh(t).RunReference(t.Context(), "Hca1", "ibccconfig", a...)
			if err != nil || exit != 0 || len(out) != 0 {
				t.Fatalf("reference: exit %d, %v, %q %q", exit, err, out, errOut)
			}
			got, gotErr, gotExit, err := fresh(t).RunIbtool(t.Context(), ibtoolBin, "Hca1", "ibccconfig", a...)
			if err != nil || gotExit != 0 || len(got) != 0 || len(gotErr) != 0 {
				t.Errorf("ibtool: exit %d, %v, stdout %q, stderr %q", gotExit, err, got, gotErr)
			}
		})
	}
	f := fresh(t) // the failures below send no Set
	tests := []struct {
		exit int
		msg  string
		args []string
	}{
		{3, "destination not a switch", []string{"SP", "2", "1", "1", "0", "0xF", "8", "1"}},
		{2, "invalid number of cct entries input given ccti_limit 1 and index 0: 1", []string{"CT", "2", "1", "0", "0:0"}},
		{2, `CC_KeyProtectBit "2": out of range 0 to 1`, []string{"CK", "3", "0", "2", "0", "0"}},
		{2, "invalid number of parameters for CongestionKeyInfo: 3, want 4", []string{"CK", "3", "0", "0", "0"}},
		{2, "entry \"0\": ccts are formatted shift:multiplier", []string{"CT", "2", "0", "0", "0"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			failsCleanly(t, f, "Hca1", tt.exit, tt.msg, "ibccconfig", tt.args...)
		})
	}
	// A Set ibsim's SwitchInfo handler turns down: no response.
	t.Run("CK 3 0 0 0 0", func(t *testing.T) {
		failsCleanly(t, fresh(t), "Hca1", 3, "CCSet(CongestionKeyInfo) to Lid 3: no response after 3 tries", "ibccconfig", "CK", "3", "0", "0", "0", "0")
	})
}
