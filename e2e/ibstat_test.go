package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestIbstatMatchesReference compares every form of ibstat on a switch's
// management port and on HCA ports, with and without SIM_HOST.
func TestIbstatMatchesReference(t *testing.T) {
	f := smallFabric(t)
	argsFor := map[string][][]string{
		"switch": {nil, {"-l"}, {"-s"}, {"-p"}, {"ibsim0"}, {"ibsim0", "0"}, {"-d"}, {"-s", "ibsim0"}},
		"hca":    {nil, {"-l"}, {"-s"}, {"-p"}, {"ibsim0"}, {"ibsim0", "1"}, {"ibsim0", "01"}, {"-d", "ibsim0"}},
	}
	hosts := []struct{ name, kind string }{
		{"", "switch"}, // ibsim's default port: the first node, Switch1
		{"Switch2", "switch"},
		{"Hca1", "hca"},
		{"Hca4", "hca"},
	}
	for _, h := range hosts {
		for _, args := range argsFor[h.kind] {
			name := strings.TrimSpace(h.name + " " + strings.Join(args, " "))
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sameAsReference(t, f, h.name, "ibstat", args...)
			})
		}
	}
}

// TestIbstatErrors checks where infiniband-diags' ibstat panics (exit
// 255 with ibwarn/ibpanic lines), ibtool prints one line and exits 2.
func TestIbstatErrors(t *testing.T) {
	f := smallFabric(t)
	tests := []struct {
		host string
		args []string
		msg  string
	}{
		{"Hca1", []string{"nosuch"}, "'nosuch' IB device can't be found"},
		{"Hca1", []string{"ibsim0", "2"}, "has no port number 2"},
		{"Switch1", []string{"ibsim0", "1"}, "has no port number 1"},
		{"Hca1", []string{"ibsim0", "x"}, `invalid port number "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.host+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			failsCleanly(t, f, tt.host, 2, tt.msg, "ibstat", tt.args...)
		})
	}
}

// TestIbstatSysfsRoot runs the built binary, as "ibtool ibstat" and through
// the ibstat symlink, on the kernel path with a --sysfs or $IBTOOL_SYSFS
// that is not there: one line and exit 2, not an empty listing and exit 0.
func TestIbstatSysfsRoot(t *testing.T) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IBSIM_") && !strings.HasPrefix(kv, "IBTOOL_") {
			env = append(env, kv)
		}
	}
	const want = "ibstat: %s: no such directory; want the sysfs mount point, such as /sys\n"
	tests := []struct {
		name    string
		argv    []string
		env     string
		wantErr string
	}{
		{"ibtool ibstat --sysfs", []string{ibtoolBin, "ibstat", "--sysfs", "/nonexistent"}, "", fmt.Sprintf(want, "--sysfs /nonexistent")},
		{"ibstat --sysfs -l", []string{filepath.Join(linkDir, "ibstat"), "--sysfs", "/nonexistent", "-l"}, "", fmt.Sprintf(want, "--sysfs /nonexistent")},
		{"IBTOOL_SYSFS ibstat", []string{filepath.Join(linkDir, "ibstat")}, "IBTOOL_SYSFS=/nonexistent", fmt.Sprintf(want, "IBTOOL_SYSFS=/nonexistent")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
			cmd.Env = env
			if tt.env != "" {
				cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], tt.env)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || stdout.Len() != 0 || stderr.String() != tt.wantErr {
				t.Errorf("%v, stdout %q, stderr %q; want exit 2, nothing and %q", err, stdout.String(), stderr.String(), tt.wantErr)
			}
		})
	}
}
