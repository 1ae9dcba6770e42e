package cmd

import (
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestPythonRdmaSAFlag: the tools python-rdma's ibtool gives --sa (its
// LibIBOpts.setup adds it, and --smkey, to every tool) take it.
func TestPythonRdmaSAFlag(t *testing.T) {
	for _, name := range []string{
		"perfquery", "ibportstate", "ibping", "ibsysstat", "vendstat", "smpdump", "ibtracert", "ibswportwatch",
		"ibchecknode", "ibcheckport", "ibcheckportstate", "ibcheckportwidth", "ibcheckerrs", "ibdatacounts",
		"smpquery", "sminfo", "ibaddr", "ibroute", "query",
	} {
		tool, err := cmdutil.Lookup(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		f, _, _ := cmdutil.NewTestFactory(nil)
		c := tool.New(f)
		for _, flag := range []string{"sa", "smkey"} {
			if c.Flags().Lookup(flag) == nil {
				t.Errorf("%s has no --%s", name, flag)
			}
		}
	}
}
