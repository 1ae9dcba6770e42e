package cmdutil

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// zz-mkey is a test tool with -y and no discovery: it prints the M_Key its
// transactor would put in every SMP.
func init() {
	Register(Tool{Name: "zz-mkey", Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		c := &cobra.Command{
			Use:  "zz-mkey",
			Args: ArgsRange(0, 0),
			RunE: func(c *cobra.Command, _ []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				fmt.Fprintf(f.IO.Out, "mkey=%#x\n", o.TransactorOptions().MKey)
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsLocalPort|FlagsMAD|FlagsMKey)
		return c
	}})
}

func TestMKeyFlag(t *testing.T) {
	conf := writeConf(t, "ibdiag.conf", "m_key=0x1234\n")
	tests := []struct {
		name     string
		def      string // the default ibdiag.conf
		args     []string
		in       string // what the operator types at the prompt
		want     string
		wantCode int
	}{
		{"none", "", nil, "", "mkey=0x0\n", 0},
		{"hex", "", []string{"-y", "0x1234"}, "", "mkey=0x1234\n", 0},
		{"decimal, long", "", []string{"--m_key", "4660"}, "", "mkey=0x1234\n", 0},
		{"leading zero is decimal", "", []string{"-y", "010"}, "", "mkey=0xa\n", 0},
		{"all ones", "", []string{"-y", "0xffffffffffffffff"}, "", "mkey=0xffffffffffffffff\n", 0},
		{"ibdiag.conf's m_key", conf, nil, "", "mkey=0x1234\n", 0},
		{"-z's m_key", "", []string{"-z", conf}, "", "mkey=0x1234\n", 0},
		{"the flag wins", conf, []string{"-y", "7"}, "", "mkey=0x7\n", 0},
		{"the flag wins over -z after it", "", []string{"-y", "7", "-z", conf}, "", "mkey=0x7\n", 0},
		{"asks for it", "", []string{"-y", "x"}, "0x1234\n", "mkey=0x1234\n", 0},
		{"asks for it, no newline", conf, []string{"-y", "x"}, "99", "mkey=0x63\n", 0},
		{"nothing typed", "", []string{"-y", "x"}, "", "", ExitUsage},
		{"a bad key typed", "", []string{"-y", "x"}, "0xg\n", "", ExitUsage},
		{"malformed number", "", []string{"-y", "0x12g"}, "0x1234\n", "", ExitUsage},
		{"too big", "", []string{"-y", "0x10000000000000000"}, "", "", ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := NewTestFactory(map[string]string{ibdiagConfEnv: tt.def})
			f.IO.In = strings.NewReader(tt.in)
			code := RunTool(append([]string{"zz-mkey"}, tt.args...), f)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, stderr %q; want %d", code, errOut, tt.wantCode)
			}
			msg := strings.TrimPrefix(errOut.String(), "M_Key: \n")
			if code != 0 {
				if !strings.HasPrefix(msg, "zz-mkey: invalid M_Key ") || strings.Count(msg, "\n") != 1 {
					t.Errorf("stderr %q, want a line naming the M_Key", errOut)
				}
				return
			}
			if diff := cmp.Diff(tt.want, out.String()); diff != "" {
				t.Errorf("unexpected output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRenderErrorMKeyHint checks that a timeout of an SMP says which
// M_Key went, since a protected port's silence looks like a dead one, and
// that other timeouts say nothing of M_Keys.
func TestRenderErrorMKeyHint(t *testing.T) {
	timeout := func(c mad.Class, key uint64) error {
		return &madrpc.TimeoutError{Request: "SubnGet(PortInfo)", To: "Lid 3", Tries: 3, Elapsed: 3 * time.Second, Class: c, MKey: key}
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"SMP without a key", timeout(mad.ClassSMI, 0),
			"t: SubnGet(PortInfo) to Lid 3: no response after 3 tries (3s); an M_Key protected port does not answer SMPs without its M_Key, and none was sent (-y gives one)\n"},
		{"DR SMP with a key", WithContext(timeout(mad.ClassSMIDirect, 0x1234), "operation PortInfo"),
			"t: operation PortInfo: SubnGet(PortInfo) to Lid 3: no response after 3 tries (3s); an M_Key protected port does not answer SMPs without its M_Key, and 0x0000000000001234 was sent (-y)\n"},
		{"PMA", timeout(mad.ClassPerf, 0), "t: SubnGet(PortInfo) to Lid 3: no response after 3 tries (3s)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			RenderError(&b, "t", tt.err, 0)
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("unexpected message (-want +got):\n%s", diff)
			}
		})
	}
}
