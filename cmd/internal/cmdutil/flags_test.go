package cmdutil

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// zz-local is a test tool that prints the local end port its flags name.
func init() {
	Register(Tool{Name: "zz-local", Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		c := &cobra.Command{
			Use:  "zz-local",
			Args: ArgsRange(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "local=%s kind=%s timeout=%v retries=%d\n", o.Local, o.Local.Kind, o.Timeout, o.Retries)
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD)
		return c
	}})
}

func TestCommonLocalFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "local= kind=name timeout=0s retries=2\n"},
		{"ca", []string{"-C", "mlx5_0"}, "local=mlx5_0 kind=name timeout=0s retries=2\n"},
		{"ca and port", []string{"-C", "mlx5_0", "-P", "2"}, "local=mlx5_0/2 kind=name timeout=0s retries=2\n"},
		{"leading zero is decimal", []string{"-C", "mlx5_0", "-P", "010"}, "local=mlx5_0/10 kind=name timeout=0s retries=2\n"},
		{"hex port", []string{"-C", "mlx5_0", "-P", "0x10"}, "local=mlx5_0/16 kind=name timeout=0s retries=2\n"},
		{"port spec", []string{"--port", "mlx5_1/1"}, "local=mlx5_1/1 kind=name timeout=0s retries=2\n"},
		{"port guid", []string{"--port", "0x0002c90300a1b2c4"}, "local=0x0002c90300a1b2c4 kind=port GUID timeout=0s retries=2\n"},
		{"port gid", []string{"--port", "fe80::2:c903:a1:b2c4"}, "local=fe80::2:c903:a1:b2c4 kind=port GID timeout=0s retries=2\n"},
		{"timeout and retries", []string{"-t", "250", "--retries", "0"}, "local= kind=name timeout=250ms retries=0\n"},
		// python-rdma's forms of -C and -P.
		{"-C node GUID", []string{"-C", "0x0002c90300a1b2c3"}, "local=0x0002c90300a1b2c3/0 kind=node GUID timeout=0s retries=2\n"},
		{"-C node GUID and -P", []string{"-C", "0002:c903:00a1:b2c3", "-P", "2"}, "local=0x0002c90300a1b2c3/2 kind=node GUID timeout=0s retries=2\n"},
		{"-P device/port", []string{"-P", "mlx5_1/1"}, "local=mlx5_1/1 kind=name timeout=0s retries=2\n"},
		{"-P device", []string{"-P", "mlx5_1"}, "local=mlx5_1 kind=name timeout=0s retries=2\n"},
		{"-P port GUID", []string{"-P", "0x0002c90300a1b2c4"}, "local=0x0002c90300a1b2c4 kind=port GUID timeout=0s retries=2\n"},
		{"-P port GUID colons", []string{"-P", "0002:c903:00a1:b2c4"}, "local=0x0002c90300a1b2c4 kind=port GUID timeout=0s retries=2\n"},
		{"-P port GID", []string{"-P", "fe80::2:c903:a1:b2c4"}, "local=fe80::2:c903:a1:b2c4 kind=port GID timeout=0s retries=2\n"},
		{"-P number alone", []string{"-P", "2"}, "local=2 kind=name timeout=0s retries=2\n"},
		{"-P hex number stays a number", []string{"-P", "0x0000000000000002"}, "local=2 kind=name timeout=0s retries=2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			if code := RunTool(append([]string{"zz-local"}, tt.args...), f); code != 0 {
				t.Fatalf("exit code %d, stderr %q", code, errOut)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCommonLocalFlagsMalformed checks that every malformed local end port
// gets exactly one line on stderr and exit 2.
func TestCommonLocalFlagsMalformed(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{[]string{"-P", "x/y"}, `invalid port "x/y"`},
		{[]string{"-P", "-1"}, `invalid port "-1"`},
		{[]string{"-P", "+1"}, `invalid port "+1"`},
		{[]string{"-P", "256"}, `invalid port number "256"`},
		{[]string{"-P", "0x100"}, `invalid port number "0x100"`},
		{[]string{"-P", "0x"}, `invalid port "0x"`},
		{[]string{"-P", "1.5"}, `invalid port "1.5"`},
		{[]string{"-C", "mlx5_0", "-P", "x"}, `invalid port number "x"`},
		{[]string{"-C", "mlx5_0", "-P", "mlx5_0/1"}, "-C names the device, so -P takes a port number"},
		{[]string{"-C", "mlx5_0", "-P", "0x0002c90300a1b2c4"}, "-C names the device, so -P takes a port number"},
		{[]string{"-C", "0x0"}, `invalid node GUID "0x0"`},
		{[]string{"-C", "0xg"}, `invalid node GUID "0xg"`},
		{[]string{"--port", "mlx5_0", "-P", "mlx5_0/1"}, "both name the local port"},
		{[]string{"-C", "mlx5 0"}, `"mlx5 0"`},
		{[]string{"-C", "0mlx"}, `"0mlx"`},
		{[]string{"-C", strings.Repeat("a", 64)}, "CA name"},
		{[]string{"--port", "mlx5_0/x"}, `"mlx5_0/x"`},
		{[]string{"--port", "mlx5_0/256"}, `"mlx5_0/256"`},
		{[]string{"--port", "0xzz"}, `"0xzz"`},
		{[]string{"--port", "0x00000000000000001"}, `"0x00000000000000001"`},
		{[]string{"--port", "fe80::1::2"}, `"fe80::1::2"`},
		{[]string{"--port", " mlx5_0"}, `" mlx5_0"`},
		{[]string{"--port", "mlx5_0", "-C", "mlx5_1"}, "both name the local port"},
		{[]string{"--port", "mlx5_0", "-P", "1"}, "both name the local port"},
		{[]string{"-t", "-5"}, "invalid timeout"},
		{[]string{"--retries", "-1"}, "invalid --retries"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			code := RunTool(append([]string{"zz-local"}, tt.args...), f)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
			msg := errOut.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "zz-local: ") || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("stderr %q: want one line \"zz-local: ...%s...\"", msg, tt.wantErr)
			}
		})
	}
}

// registerDiscoveryProbe registers a test tool with the common and
// discovery flags that prints, through show, what they came to.
func registerDiscoveryProbe(name string, show func(w io.Writer, o *CommonOptions, d *DiscoveryOptions)) {
	Register(Tool{Name: name, Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		var d DiscoveryOptions
		c := &cobra.Command{
			Use:  name,
			Args: ArgsRange(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				if err := d.Finish(); err != nil {
					return err
				}
				show(f.IO.Out, &o, &d)
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD)
		AddDiscoveryFlags(c, &o, &d)
		return c
	}})
}

// zz-discovery prints the discovery mode its flags name.
func init() {
	registerDiscoveryProbe("zz-discovery", func(w io.Writer, _ *CommonOptions, d *DiscoveryOptions) {
		fmt.Fprintf(w, "mode=%s\n", d.Mode)
	})
}

// TestDiscoveryMode checks --discovery in any case: python-rdma spells
// the modes DR, LID and SA, infiniband-diags' ibtool users dr, lid, sa.
func TestDiscoveryMode(t *testing.T) {
	tests := []struct {
		args     []string
		want     string
		wantExit int
	}{
		{nil, "mode=dr\n", 0},
		{[]string{"--discovery", "SA"}, "mode=sa\n", 0},
		{[]string{"--discovery", "sa"}, "mode=sa\n", 0},
		{[]string{"--discovery", "Lid"}, "mode=lid\n", 0},
		{[]string{"--discovery=DR"}, "mode=dr\n", 0},
		{[]string{"--discovery", "SMP"}, "", ExitUsage},
		{[]string{"--discovery", ""}, "", ExitUsage},
		{[]string{"--discovery", "s a"}, "", ExitUsage},
		// python-rdma's --sa and --sa-path mean --discovery sa.
		{[]string{"--sa"}, "mode=sa\n", 0},
		{[]string{"--sa", "--discovery", "SA"}, "mode=sa\n", 0},
		{[]string{"--sa-path", "1"}, "mode=sa\n", 0},
		{[]string{"--sa", "--discovery", "DR"}, "", ExitUsage},
		{[]string{"--discovery", "lid", "--sa-path", "1"}, "", ExitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			code := RunTool(append([]string{"zz-discovery"}, tt.args...), f)
			if code != tt.wantExit {
				t.Fatalf("exit code %d, want %d; stderr %q", code, tt.wantExit, errOut)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
			if tt.wantExit != 0 && !strings.Contains(errOut.String(), "want dr, lid or sa (any case)") && !strings.Contains(errOut.String(), "discovers through the SA; it cannot go with --discovery") {
				t.Errorf("stderr %q: want the modes named", errOut)
			}
		})
	}
}

// zz-verbose is a test tool that prints the verbosity its flags add up to.
func init() {
	Register(Tool{Name: "zz-verbose", Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		c := &cobra.Command{
			Use:  "zz-verbose",
			Args: ArgsRange(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "verbose=%d\n", o.Verbose)
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsMAD)
		return c
	}})
}

// TestVerbosity: python-rdma's --verbosity is one more -v, as -d is.
func TestVerbosity(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "verbose=0\n"},
		{[]string{"--verbosity"}, "verbose=1\n"},
		{[]string{"--verbosity", "--verbosity"}, "verbose=2\n"},
		{[]string{"-v", "--verbosity", "-d"}, "verbose=3\n"},
		{[]string{"--verbose", "--verbosity"}, "verbose=2\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			if code := RunTool(append([]string{"zz-verbose"}, tt.args...), f); code != 0 {
				t.Fatalf("exit code %d, stderr %q", code, errOut)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}
