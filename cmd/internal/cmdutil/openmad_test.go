package cmdutil

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestOpenMADErrors checks the errors a tool reports when endport.Open
// fails, and their exit codes: the cause alone, a usage error where the
// flags or the environment named what is not there.
func TestOpenMADErrors(t *testing.T) {
	const fixture = "../../../pkg/rdma/testdata/mlx5"
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		want     string // the start of the message
		wantCode int
	}{
		{"no such device", []string{"--sysfs", fixture, "-C", "mlx5_7"}, nil,
			`local end port "mlx5_7": no RDMA device "mlx5_7" (have mlx5_0, mlx5_1)`, ExitUsage},
		{"no such port", []string{"--sysfs", fixture, "--port", "mlx5_0/9"}, nil,
			`local end port "mlx5_0/9": mlx5_0 has no port 9`, ExitUsage},
		{"no such sysfs", []string{"--sysfs", "/no/such/dir"}, nil,
			"--sysfs /no/such/dir: no such directory; want the sysfs mount point, such as /sys", ExitUsage},
		{"no such IBTOOL_SYSFS", nil, map[string]string{"IBTOOL_SYSFS": "/no/such/dir"},
			"IBTOOL_SYSFS=/no/such/dir: no such directory", ExitUsage},
		{"bad simulator port", []string{"--sim"}, map[string]string{"IBSIM_SERVER_PORT": "x"},
			`IBSIM_SERVER_PORT="x": want a port number 1-65535`, ExitUsage},
		{"no umad device", []string{"--sysfs", fixture}, nil, "", ExitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, _ := NewTestFactory(tt.env)
			var o CommonOptions
			c := &cobra.Command{Use: "zz"}
			AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD)
			if err := c.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Finish(c); err != nil {
				t.Fatal(err)
			}
			x, _, err := f.OpenMAD(&o)
			if err == nil {
				x.Close()
				t.Fatal("OpenMAD succeeded")
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want it to start with %q", err, tt.want)
			}
			if code := ExitCode(err); code != tt.wantCode {
				t.Errorf("exit code %d for %q, want %d", code, err, tt.wantCode)
			}
		})
	}
}
