package cmdutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// zz-target is a test tool that prints the target address it is given.
func init() {
	Register(Tool{Name: "zz-target", Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		c := &cobra.Command{
			Use:  "zz-target TARGET",
			Args: ArgsRange(1, 1),
			RunE: func(c *cobra.Command, args []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				t, err := o.ParseTarget(args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "%s %s\n", t.Kind, t)
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD|FlagsTarget)
		return c
	}})
}

func TestTargetArgument(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"12"}, "LID 12\n"},
		{[]string{"012"}, "LID 12\n"},
		{[]string{"0x1a"}, "LID 26\n"},
		{[]string{"-L", "12"}, "LID 12\n"},
		{[]string{"0x0002c90300a1b2c4"}, "GUID 0x0002c90300a1b2c4\n"},
		{[]string{"-G", "0002:c903:00a1:b2c4"}, "GUID 0x0002c90300a1b2c4\n"},
		{[]string{"fe80::2:c903:a1:b2c4"}, "GID fe80::2:c903:a1:b2c4\n"},
		{[]string{"fe80::2:c903:a1:b2c4%mlx5_0/1"}, "scoped GID fe80::2:c903:a1:b2c4%mlx5_0/1\n"},
		{[]string{"0,1,3"}, "DR path 0,1,3\n"},
		{[]string{"-D", "0"}, "DR path 0\n"},
		{[]string{"IBPath(DLID=12, SL=1)"}, "path spec IBPath(DLID=12, SL=1)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			if code := RunTool(append([]string{"zz-target"}, tt.args...), f); code != 0 {
				t.Fatalf("exit code %d, stderr %q", code, errOut)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTargetArgumentMalformed checks that every malformed or mismatched
// target gets exactly one line on stderr and exit 2.
func TestTargetArgumentMalformed(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{""}, `invalid target ""`},
		{[]string{"0x"}, `"0x"`},
		{[]string{"0xg"}, `"0xg"`},
		{[]string{"--", "-1"}, `"-1"`},
		{[]string{"49152"}, `"49152"`},
		{[]string{"65535"}, `"65535"`},
		{[]string{"99999999999999999999"}, `"99999999999999999999"`},
		{[]string{"1,2"}, `"1,2"`},
		{[]string{"0,256"}, `"0,256"`},
		{[]string{"0,,1"}, `"0,,1"`},
		{[]string{"0," + strings.Repeat("1,", 64) + "1"}, "DR path"},
		{[]string{"0x00000000000000000"}, `"0x00000000000000000"`},
		{[]string{"0x0000000000000000"}, "GUID"},
		{[]string{"::"}, `"::"`},
		{[]string{"fe80::1::2"}, `"fe80::1::2"`},
		{[]string{"fe80::1%"}, `"fe80::1%"`},
		{[]string{"fe80::1%1"}, `"fe80::1%1"`},
		{[]string{"fe80::1%a%b"}, `"fe80::1%a%b"`},
		{[]string{"IBPath()"}, `"IBPath()"`},
		{[]string{"IBPath(DLID=x)"}, `"IBPath(DLID=x)"`},
		{[]string{"IBPath(MTU=4)"}, "MTU"},
		{[]string{"IBDRPath(drPath=1:2:)"}, "drPath"},
		{[]string{"IBFoo(DLID=1)"}, `"IBFoo(DLID=1)"`},
		{[]string{"12 "}, `"12 "`},
		{[]string{"switch1"}, `"switch1"`},
		{[]string{"-G", "12"}, `"12"`},
		{[]string{"-L", "0x0002c90300a1b2c4"}, `"0x0002c90300a1b2c4"`},
		{[]string{"-D", "12"}, `"12"`},
		{[]string{"-L", "-G", "12"}, "at most one"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			code := RunTool(append([]string{"zz-target"}, tt.args...), f)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
			msg := errOut.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "zz-target: ") || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("stderr %q: want one line \"zz-target: ...%s...\"", msg, tt.wantErr)
			}
		})
	}
}

// TestTargetScopePicksLocalPort checks that the end port a target names
// (a scoped GID's scope, a path spec's end_port) is the port the run opens,
// that it must agree with -C, -P and --port as python-rdma's ibtool asks,
// and that a disagreement is a usage error.
func TestTargetScopePicksLocalPort(t *testing.T) {
	devs := rdma.NewFS(os.DirFS("../../../pkg/rdma/testdata/mlx5"), "/sys")
	tests := []struct {
		args     []string // flags, then the targets
		want     string   // device/port, or the error
		wantCode int
	}{
		{[]string{"12"}, "mlx5_0/1", 0},
		{[]string{"fe80::1"}, "mlx5_0/1", 0},
		{[]string{"fe80::1%mlx5_0/2"}, "mlx5_0/2", 0},
		{[]string{"fe80::1%mlx5_1"}, "mlx5_1/1", 0},
		{[]string{"IBPath(DGID=fe80::1, end_port=mlx5_0/2)"}, "mlx5_0/2", 0},
		{[]string{"-C", "mlx5_0", "fe80::1%mlx5_0/2"}, "mlx5_0/2", 0},
		{[]string{"-C", "mlx5_0", "-P", "2", "fe80::1%mlx5_0/2"}, "mlx5_0/2", 0},
		{[]string{"--port", "0c42:a103:00a1:b2c4", "fe80::1%mlx5_0/1"}, "mlx5_0/1", 0},
		{[]string{"fe80::1%mlx5_0/1", "fe80::2%mlx5_0"}, "mlx5_0/1", 0},
		{[]string{"-C", "mlx5_0", "fe80::1%mlx5_1/1"},
			`target end port "mlx5_1/1" is mlx5_1 port 1, not on device "mlx5_0" that the local end port names`, ExitUsage},
		{[]string{"-P", "1", "fe80::1%mlx5_0/2"},
			`target end port "mlx5_0/2" is mlx5_0 port 2, but the local end port "1" is mlx5_0 port 1`, ExitUsage},
		{[]string{"fe80::1%mlx5_0/1", "fe80::2%mlx5_1/1"},
			`target end port "mlx5_1/1" is mlx5_1 port 1, but another target's end port "mlx5_0/1" is mlx5_0 port 1`, ExitUsage},
		{[]string{"fe80::1%mlx5_7/1"}, `local end port "mlx5_7/1": no RDMA device "mlx5_7" (have mlx5_0, mlx5_1)`, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, _, _ := NewTestFactory(nil)
			var o CommonOptions
			c := &cobra.Command{Use: "zz"}
			AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsTarget)
			if err := c.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := o.Finish(c); err != nil {
				t.Fatal(err)
			}
			for _, a := range c.Flags().Args() {
				if _, err := o.ParseTarget(a); err != nil {
					t.Fatal(err)
				}
			}
			d, p, err := o.resolveLocal(devs)
			got := ""
			if err != nil {
				err = o.localPortError(err)
				got = err.Error()
			} else {
				got = d.Name + "/" + strconv.Itoa(p.Number)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected local end port (-want +got):\n%s", diff)
			}
			if code := ExitCode(err); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
		})
	}
}
