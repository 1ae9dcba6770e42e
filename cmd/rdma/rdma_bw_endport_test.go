package rdma

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// parseBwOn parses rdma_bw's arguments with the local devices of a sysfs
// fixture tree, returning the device and port it would open, or the error.
func parseBwOn(t *testing.T, sysfs string, args ...string) (*rdmaBwOptions, error) {
	t.Helper()
	f, _, _ := cmdutil.NewTestFactory(map[string]string{"IBTOOL_SYSFS": sysfs})
	var got *rdmaBwOptions
	c := cmdutil.ToolCommand(f, cmdutil.Tool{Name: "rdma_bw", New: func(f *cmdutil.Factory) *cobra.Command {
		return newRdmaBwCmd(f, func(o *rdmaBwOptions) error { got = o; return nil })
	}})
	c.SetArgs(append([]string{}, args...))
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	return got, c.Execute()
}

// TestRdmaBwPythonEndPort: python-rdma's -C (device name or node GUID) and
// -P (port number, DEVICE/PORT, port GUID, GID) pick -d's device and -i's
// port, alone or with the perftest flag of the other half.
func TestRdmaBwPythonEndPort(t *testing.T) {
	const mlx5 = "../../pkg/rdma/testdata/mlx5"
	tests := []struct {
		args    []string
		dev     string
		port    int
		wantErr string
	}{
		{[]string{"h"}, "", 1, ""},
		{[]string{"-C", "mlx5_0", "-P", "2", "h"}, "mlx5_0", 2, ""},
		{[]string{"--Ca", "mlx5_1", "h"}, "mlx5_1", 1, ""},
		{[]string{"-C", "0x0c42a1030065432" + "0", "h"}, "mlx5_1", 1, ""},
		{[]string{"-C", "0c42:a103:00a1:b2c4", "-P", "2", "h"}, "mlx5_0", 2, ""},
		{[]string{"-P", "mlx5_0/2", "h"}, "mlx5_0", 2, ""},
		{[]string{"--Port", "0x0c42a10300a1b2c5", "h"}, "mlx5_0", 2, ""},
		{[]string{"-P", "fe80::e42:a1ff:fe65:4321", "h"}, "mlx5_1", 1, ""},
		{[]string{"-P", "1"}, "mlx5_0", 1, ""},
		{[]string{"-d", "mlx5_1", "-P", "1", "h"}, "mlx5_1", 1, ""},
		{[]string{"-C", "mlx5_0", "-i", "2", "h"}, "mlx5_0", 2, ""},
		{[]string{"-C", "mlx5_0", "-d", "mlx5_1", "h"}, "", 0, `-C "mlx5_0" and -d "mlx5_1" both name the device; give one`},
		{[]string{"-P", "2", "-i", "2", "h"}, "", 0, `-P "2" and -i 2 both name the port; give one`},
		{[]string{"-C", "mlx9_0", "h"}, "", 0, `no RDMA device "mlx9_0"`},
		{[]string{"-P", "0x0c42a103ffffffff", "h"}, "", 0, "no local port has GUID"},
		{[]string{"-C", "mlx5_0", "-P", "x", "h"}, "", 0, "x"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o, err := parseBwOn(t, mlx5, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
					t.Fatalf("error %v (exit %d), want a usage error containing %q", err, cmdutil.ExitCode(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([2]any{tt.dev, tt.port}, [2]any{o.Device, o.IBPort}); diff != "" {
				t.Errorf("device and port (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRdmaBwPythonFlags: --num-sge and --debug parse with their ranges.
func TestRdmaBwPythonFlags(t *testing.T) {
	o, err := parseBwOn(t, "", "--num-sge", "4", "--debug", "--debug", "h")
	if err != nil {
		t.Fatal(err)
	}
	if o.NumSGE != 4 || o.Debug != 2 {
		t.Errorf("NumSGE %d, Debug %d; want 4 and 2", o.NumSGE, o.Debug)
	}
	for _, n := range []string{"0", "65"} {
		if _, err := parseBwOn(t, "", "--num-sge", n, "h"); err == nil || !strings.Contains(err.Error(), "invalid --num-sge "+n+": want 1 to 64") {
			t.Errorf("--num-sge %s: %v", n, err)
		}
	}
	var errOut bytes.Buffer
	d := &rdmaBwOptions{IO: cmdutil.IOStreams{ErrOut: &errOut}}
	d.debugf("Listening on %s", "[::]:18515")
	d.Debug = 1
	d.debugf("Listening on %s", "[::]:18515")
	if got := errOut.String(); got != "D: Listening on [::]:18515\n" {
		t.Errorf("debug lines %q", got)
	}
}
