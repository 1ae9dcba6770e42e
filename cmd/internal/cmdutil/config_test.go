package cmdutil

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// zz-conf is a test tool that prints what its common and discovery
// options hold after Finish.
func init() {
	Register(Tool{Name: "zz-conf", Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		var d DiscoveryOptions
		c := &cobra.Command{
			Use:  "zz-conf",
			Args: ArgsRange(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				if err := d.Finish(); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "local=%s timeout=%v smkey=%#x mkey=%#x mlxepi=%v\n", o.Local, o.Timeout, o.SMKey, o.MKey, !d.NoMlxEPI)
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD|FlagsSA)
		AddDiscoveryFlags(c, &o, &d)
		return c
	}})
}

// writeConf writes text to a file in a test directory and returns its path.
func writeConf(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigFile(t *testing.T) {
	every := writeConf(t, "every.conf", "# site\nCA=mlx5_1\nPort=2\ntimeout=300\nMLX_EPI=false\nm_key=0x1234\nsa_key=0x99\n")
	def := writeConf(t, "ibdiag.conf", "CA=mlx5_0\nPort=1\ntimeout=100\n")
	portOnly := writeConf(t, "port.conf", "Port=2\n")
	none := filepath.Join(t.TempDir(), "none.conf")
	const zero = "local= timeout=0s smkey=0x1 mkey=0x0 mlxepi=true\n"
	tests := []struct {
		name string
		def  string // the default ibdiag.conf
		args []string
		want string
	}{
		{"no file", "", nil, zero},
		{"missing default is silent", none, nil, zero},
		{"default file", def, nil, "local=mlx5_0/1 timeout=100ms smkey=0x1 mkey=0x0 mlxepi=true\n"},
		{"every key", "", []string{"-z", every}, "local=mlx5_1/2 timeout=300ms smkey=0x99 mkey=0x1234 mlxepi=false\n"},
		{"long flag", "", []string{"--config", every}, "local=mlx5_1/2 timeout=300ms smkey=0x99 mkey=0x1234 mlxepi=false\n"},
		{"-z over the default, key by key", def, []string{"-z", portOnly}, "local=mlx5_0/2 timeout=100ms smkey=0x1 mkey=0x0 mlxepi=true\n"},
		{"flags win", "", []string{"-C", "mlx4_0", "-P", "1", "-t", "20", "--smkey", "7", "-y", "5", "--no-mlx-epi=false", "-z", every},
			"local=mlx4_0/1 timeout=20ms smkey=0x7 mkey=0x5 mlxepi=true\n"},
		{"flags win in any order", "", []string{"-z", every, "-t", "20"}, "local=mlx5_1/2 timeout=20ms smkey=0x99 mkey=0x1234 mlxepi=false\n"},
		{"-C keeps the file's Port", "", []string{"-C", "mlx4_0", "-z", every}, "local=mlx4_0/2 timeout=300ms smkey=0x99 mkey=0x1234 mlxepi=false\n"},
		{"--port overrides CA and Port", def, []string{"--port", "mlx5_3/1"}, "local=mlx5_3/1 timeout=100ms smkey=0x1 mkey=0x0 mlxepi=true\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := NewTestFactory(map[string]string{ibdiagConfEnv: tt.def})
			if code := RunTool(append([]string{"zz-conf"}, tt.args...), f); code != 0 {
				t.Fatalf("exit code %d, stderr %q", code, errOut)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigFileErrors checks that each bad config file gets one line on
// stderr naming the file (and line) and exit 2.
func TestConfigFileErrors(t *testing.T) {
	badLine := writeConf(t, "bad.conf", "# ok\nPort=1\ntimeout=fast\n")
	badCA := writeConf(t, "ca.conf", "CA=0mlx\n")
	dir := t.TempDir()
	none := filepath.Join(dir, "none.conf")
	tests := []struct {
		name    string
		def     string
		args    []string
		wantErr string
	}{
		{"bad line", "", []string{"-z", badLine}, badLine + ":3: timeout=fast: want a decimal number"},
		{"bad line in the default", badLine, nil, badLine + ":3: timeout=fast"},
		{"bad default with -z", badLine, []string{"-z", writeConf(t, "ok.conf", "Port=1\n")}, badLine + ":3:"},
		{"missing -z file", "", []string{"-z", none}, "config file: open " + none + ": no such file or directory"},
		{"-z a directory", "", []string{"-z", dir}, dir + ": read " + dir},
		{"bad CA", "", []string{"-z", badCA}, badCA + ":1: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := NewTestFactory(map[string]string{ibdiagConfEnv: tt.def})
			if code := RunTool(append([]string{"zz-conf"}, tt.args...), f); code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out)
			}
			msg := errOut.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "zz-conf: ") || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("stderr %q: want one line \"zz-conf: ...%s...\"", msg, tt.wantErr)
			}
		})
	}
}

// TestConfigFlagGroups checks which flag groups take -z: the ones of the
// infiniband-diags tools that parse ibdiag_process_opts' options.
func TestConfigFlagGroups(t *testing.T) {
	for _, tt := range []struct {
		set  flagSet
		want bool
	}{
		{0, false}, {FlagsJSON, false}, {FlagsLocalPort, true}, {FlagsMAD, true}, {FlagsConfig, true},
	} {
		f, _, _ := NewTestFactory(nil)
		c := &cobra.Command{Use: "x"}
		var o CommonOptions
		AddCommonFlags(c, f, &o, tt.set)
		if got := c.Flags().ShorthandLookup("z") != nil; got != tt.want {
			t.Errorf("flag set %#x: has -z %v, want %v", tt.set, got, tt.want)
		}
	}
}

func TestDefaultIBDiagConf(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got, want := defaultIBDiagConf(getenv), "/etc/infiniband-diags/ibdiag.conf"; got != want {
		t.Errorf("default path %q, want %q", got, want)
	}
	env[ibdiagConfEnv] = "/tmp/x.conf"
	if got, want := defaultIBDiagConf(getenv), "/tmp/x.conf"; got != want {
		t.Errorf("path with $%s set: %q, want %q", ibdiagConfEnv, got, want)
	}
}

// zz-discosmkey is a discovery tool without FlagsSA: its --smkey comes
// from AddDiscoveryFlags.
func init() {
	registerDiscoveryProbe("zz-discosmkey", func(w io.Writer, o *CommonOptions, _ *DiscoveryOptions) {
		fmt.Fprintf(w, "smkey=%#x\n", o.SMKey)
	})
}

// TestDiscoverySMKeyFlag: a discovery tool's --smkey (the SM_Key of
// --discovery sa's queries) is 0 unless given, takes ibdiag.conf's sa_key
// when not given, and reads a number as python-rdma's optparse does (and
// the --sa tools' --smkey): 0x hex, 0b binary, a leading 0 octal.
func TestDiscoverySMKeyFlag(t *testing.T) {
	conf := writeConf(t, "sa.conf", "sa_key=0x99\n")
	tests := []struct {
		args     []string
		want     string
		wantExit int
	}{
		{nil, "smkey=0x0\n", 0},
		{[]string{"--smkey", "0x10"}, "smkey=0x10\n", 0},
		{[]string{"--smkey", "010"}, "smkey=0x8\n", 0},
		{[]string{"--smkey", "0b101"}, "smkey=0x5\n", 0},
		{[]string{"--smkey", "1_000"}, "", ExitUsage},
		{[]string{"--smkey", "18446744073709551615"}, "smkey=0xffffffffffffffff\n", 0},
		{[]string{"-z", conf}, "smkey=0x99\n", 0},
		{[]string{"-z", conf, "--smkey", "3"}, "smkey=0x3\n", 0},
		{[]string{"--smkey", "-1"}, "", ExitUsage},
		{[]string{"--smkey", "0x"}, "", ExitUsage},
		{[]string{"--smkey", "18446744073709551616"}, "", ExitUsage},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			f, out, errOut := NewTestFactory(nil)
			if code := RunTool(append([]string{"zz-discosmkey"}, tt.args...), f); code != tt.wantExit {
				t.Fatalf("exit code %d, want %d; stderr %q", code, tt.wantExit, errOut)
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
			if tt.wantExit != 0 && !strings.Contains(errOut.String(), "invalid --smkey") {
				t.Errorf("stderr %q: want it to name --smkey", errOut)
			}
		})
	}
}
