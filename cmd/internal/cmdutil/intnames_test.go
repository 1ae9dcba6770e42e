package cmdutil

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// zz-names is a test tool that prints libibmad dotted lines, in pieces.
func init() {
	Register(Tool{Name: "zz-names", Summary: "test tool", New: func(f *Factory) *cobra.Command {
		var o CommonOptions
		c := &cobra.Command{
			Use: "zz-names",
			RunE: func(c *cobra.Command, args []string) error {
				if err := o.Finish(c); err != nil {
					return err
				}
				fmt.Fprint(f.IO.Out, "# Node info: Lid 3\nBaseVers:....")
				fmt.Fprint(f.IO.Out, "....................1\n\t\tLocalPort:.......................0\nNotALabel:.......................7\n")
				fmt.Fprint(f.IO.Out, "RespTimeVal:.....................18")
				return nil
			},
		}
		AddCommonFlags(c, f, &o, FlagsJSON)
		return c
	}})
}

// TestIntNames: --int-names renames libibmad's dotted lines by the IBA
// names, across writes and at the end of output; other lines pass.
func TestIntNames(t *testing.T) {
	const plain = "# Node info: Lid 3\nBaseVers:........................1\n\t\tLocalPort:.......................0\nNotALabel:.......................7\nRespTimeVal:.....................18"
	tests := []struct {
		args []string
		want string
	}{
		{nil, plain},
		{[]string{"--int-names"}, "# Node info: Lid 3\nBaseVersion......................1\n\t\tLocalPortNum.....................0\nNotALabel:.......................7\nRespTimeValue....................18"},
	}
	for _, tt := range tests {
		f, out, errOut := NewTestFactory(nil)
		if code := RunTool(append([]string{"zz-names"}, tt.args...), f); code != 0 {
			t.Fatalf("%v: exit %d, %s", tt.args, code, errOut)
		}
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, diff)
		}
	}
	// A line whose dots do not reach the value column is not libibmad's.
	if got := intNames([]byte("BaseVers:..1\n")); !bytes.Equal(got, []byte("BaseVers:..1\n")) {
		t.Errorf("short dots rewritten: %q", got)
	}
}
