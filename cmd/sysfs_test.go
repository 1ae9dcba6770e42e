package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSysfsRoot checks that every tool taking --sysfs or $IBTOOL_SYSFS
// refuses a directory that is not there, or not a directory, with one
// line and exit 2, before it reads anything.
func TestSysfsRoot(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "; want the sysfs mount point, such as /sys\n"
	tests := []struct {
		args    []string
		env     map[string]string
		wantErr string
	}{
		{[]string{"ibstat", "--sysfs", "/nonexistent"}, nil, "ibstat: --sysfs /nonexistent: no such directory" + want},
		{[]string{"ibstat", "-l"}, map[string]string{"IBTOOL_SYSFS": "/nonexistent"}, "ibstat: IBTOOL_SYSFS=/nonexistent: no such directory" + want},
		{[]string{"ibstat", "--sysfs", file}, nil, "ibstat: --sysfs " + file + ": not a directory" + want},
		{[]string{"ibstat", "--sysfs", file + "/sys"}, nil, "ibstat: --sysfs " + file + "/sys: no such directory" + want},
		{[]string{"ibstatus", "--sysfs", "/nonexistent"}, nil, "ibstatus: --sysfs /nonexistent: no such directory" + want},
		{[]string{"ibv_devices", "--sysfs", "/nonexistent"}, nil, "ibv_devices: --sysfs /nonexistent: no such directory" + want},
		{[]string{"set_nodedesc", "-v", "--sysfs", "/nonexistent"}, nil, "set_nodedesc: --sysfs /nonexistent: no such directory" + want},
		{[]string{"perfquery", "--sysfs", "/nonexistent"}, nil, "perfquery: --sysfs /nonexistent: no such directory" + want},
		// The flag wins over the variable, as for every other setting.
		{[]string{"ibstat", "--sysfs", "/nonexistent"}, map[string]string{"IBTOOL_SYSFS": "/sys"}, "ibstat: --sysfs /nonexistent: no such directory" + want},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := testFactory(tt.env)
			code := Main(tt.args, f)
			if code != ExitUsage || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, ExitUsage)
			}
			if diff := cmp.Diff(tt.wantErr, errOut.String()); diff != "" {
				t.Errorf("unexpected stderr (-want +got):\n%s", diff)
			}
		})
	}
}
