package fabric

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIblinkinfoDiff(t *testing.T) {
	orig := savedFabric(t, fakeTwoSwitches(t, nil))
	cur := fakeTwoSwitches(t, downHca2)
	tests := []struct {
		args []string
		want string
	}{
		{nil, "< CA: Hca2:\n" +
			"<       0x0000000000100004      5    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       2    1[  ] \"Switch2\" ( )\n" +
			"Switch: 0x0000000000200001 Switch2:\n" +
			"<            2    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>       5    1[  ] \"Hca2\" ( )\n" +
			">            2    1[  ] ==(                Down/Disabled)==>             [  ] \"\" ( )\n"},
		{[]string{"-l"}, "" +
			"< 0x0000000000100004 \"                          Hca2\"      5    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>  0x0000000000200001      2    1[  ] \"Switch2\" ( )\n" +
			"< 0x0000000000200001 \"                       Switch2\"      2    1[  ] ==( 4X           2.5 Gbps Active/  LinkUp)==>  0x0000000000100004      5    1[  ] \"Hca2\" ( )\n" +
			"> 0x0000000000200001 \"                       Switch2\"      2    1[  ] ==(                Down/Disabled)==>             [  ] \"\" ( )\n"},
	}
	for _, tt := range tests {
		got := runIblinkinfo(t, cur, append([]string{"--diff", orig}, tt.args...)...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("iblinkinfo --diff %v (-want +got):\n%s", tt.args, diff)
		}
	}
}
