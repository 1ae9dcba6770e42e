package smp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIbaddr(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// The local port: the switch's, by LID 2.
		{nil, "GID fe80::20:0 LID start 0x2 end 0x2\n"},
		{[]string{"-g", "2"}, "GID fe80::20:0 \n"},
		{[]string{"-l", "0,1"}, "LID start 0x3 end 0x3\n"},
		{[]string{"-L", "0,1", "1"}, "LID start 3 end 3\n"},
		{[]string{"--json", "-g", "0,1"}, "{\n  \"gid\": \"fe80::10:1\",\n  \"target\": \"DR path slid 65535; dlid 65535; 0,1\"\n}\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, _, err := runSMPTool(t, "ibaddr", tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
