package cmd

import (
	"testing"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
)

// TestMKeyFlag checks that every tool that takes -y/--m_key in
// infiniband-diags 44 (its --help; ibhosts, ibswitches and ibrouters pass
// it to ibnetdiscover), and the SMP-sending tools of python-rdma, take it
// here, and that the tools infiniband-diags leaves it off (they send no
// SMPs) do not.
func TestMKeyFlag(t *testing.T) {
	with := []string{"dump_fts", "dump_lfts", "dump_mfts", "ibaddr", "ibccconfig", "ibccquery", "iblinkinfo",
		"ibnetdiscover", "ibportstate", "ibqueryerrors", "ibroute", "ibtracert", "perfquery", "sminfo", "smpdump",
		"smpquery", "ibsendtrap", "ibhosts", "ibswitches", "ibrouters",
		"query", "set_port_state", "init_all_ports"}
	without := []string{"saquery", "ibping", "ibsysstat", "vendstat", "ibstat", "ibcacheedit"}
	f, _, _ := cmdutil.NewTestFactory(nil)
	check := func(names []string, want bool) {
		for _, name := range names {
			tool, err := cmdutil.Lookup(name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			fl := tool.New(f).Flags().Lookup("m_key")
			if got := fl != nil && fl.Shorthand == "y"; got != want {
				t.Errorf("%s takes -y/--m_key: %v, want %v", name, got, want)
			}
		}
	}
	check(with, true)
	check(without, false)
}
