package fabric

import (
	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibnetdiscover --diff: what changed between a cached fabric and this one,
// as ibnetdiscover.c's diff does it; subnet.TopologyWriter writes it.

// ibnetdiscoverDiffKeys are the keys of ibnetdiscover's --diffcheck.
var ibnetdiscoverDiffKeys = map[string]cmdutil.DiffFlags{
	"sw": cmdutil.DiffSwitch, "ca": cmdutil.DiffCA, "router": cmdutil.DiffRouter, "port": cmdutil.DiffPort, "lid": cmdutil.DiffLID, "nodedesc": cmdutil.DiffNodeDesc,
}

// ibnetdiscoverDiffDefault is what --diff checks without --diffcheck.
const ibnetdiscoverDiffDefault = cmdutil.DiffSwitch | cmdutil.DiffCA | cmdutil.DiffRouter | cmdutil.DiffPort

// topologyDiffChecks are the subnet.DiffCheck of each --diffcheck flag.
var topologyDiffChecks = []struct {
	flag  cmdutil.DiffFlags
	check subnet.DiffCheck
}{
	{cmdutil.DiffSwitch, subnet.DiffSwitches}, {cmdutil.DiffCA, subnet.DiffCAs}, {cmdutil.DiffRouter, subnet.DiffRouters},
	{cmdutil.DiffPort, subnet.DiffPorts}, {cmdutil.DiffLID, subnet.DiffLIDs}, {cmdutil.DiffNodeDesc, subnet.DiffNodeDescs},
}

// topologyDiffCheck is what the topology diff compares for flags.
func topologyDiffCheck(flags cmdutil.DiffFlags) subnet.DiffCheck {
	var c subnet.DiffCheck
	for _, m := range topologyDiffChecks {
		if flags&m.flag != 0 {
			c |= m.check
		}
	}
	return c
}
