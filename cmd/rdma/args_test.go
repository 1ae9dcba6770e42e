package rdma

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdtest"
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// argsCase is one command line of a tool: the options it parses to, or
// the usage error it gives.
type argsCase[O any] struct {
	name    string
	args    []string
	want    O
	wantErr string
}

// parseTool parses args for the tool name built by newCmd and returns
// the options it would have run with.
func parseTool[O any](t *testing.T, name string, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, args []string) (*O, error) {
	t.Helper()
	var o *O
	err := cmdtest.ParseToolArgs(t, name, func(f *cmdutil.Factory) *cobra.Command {
		return newCmd(f, func(opts *O) error { o = opts; return nil })
	}, args)
	return o, err
}

// testArgs runs every case through parseTool and compares the options
// under opts.
func testArgs[O any](t *testing.T, name string, newCmd func(*cmdutil.Factory, func(*O) error) *cobra.Command, tests []argsCase[O], opts ...cmp.Option) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseTool(t, name, newCmd, tt.args)
			if !cmdtest.CheckParseErr(t, err, tt.wantErr) {
				return
			}
			if diff := cmp.Diff(tt.want, *o, opts...); diff != "" {
				t.Errorf("unexpected options (-want +got):\n%s", diff)
			}
		})
	}
}
