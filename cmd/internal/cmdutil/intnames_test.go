package cmdutil

import (
	"bytes"
	"fmt"
	"strings"
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

// TestIntNamesOutsideARun: a tool's command has --int-names however its
// Factory was made (the man pages, the completions and "ibtool help" build
// commands on the process's Factory, not a run's), and the flag works
// there too.
func TestIntNamesOutsideARun(t *testing.T) {
	tool, err := Lookup("zz-names")
	if err != nil {
		t.Fatal(err)
	}
	f, out, errOut := NewTestFactory(nil)
	c := ToolCommand(f, tool)
	if c.Flags().Lookup("int-names") == nil {
		t.Fatal("zz-names built on a plain Factory has no --int-names")
	}
	r := NewRun(f)
	defer r.Stop()
	if code := r.Execute(f, tool, tool.Name, c, []string{"--int-names"}); code != 0 {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	if want := "BaseVersion......................1\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output %q: want %q", out, want)
	}
}
