package cmd

import "github.com/ibtool/ibtool/pkg/subnet"

// ibnetdiscover --diff: what changed between a cached fabric and this one,
// as ibnetdiscover.c's diff does it; subnet.TopologyWriter writes it.

// ibnetdiscoverDiffKeys are the keys of ibnetdiscover's --diffcheck.
var ibnetdiscoverDiffKeys = map[string]diffFlags{
	"sw": diffSwitch, "ca": diffCA, "router": diffRouter, "port": diffPort, "lid": diffLID, "nodedesc": diffNodeDesc,
}

// ibnetdiscoverDiffDefault is what --diff checks without --diffcheck.
const ibnetdiscoverDiffDefault = diffSwitch | diffCA | diffRouter | diffPort

// topologyDiffChecks are the subnet.DiffCheck of each --diffcheck flag.
var topologyDiffChecks = []struct {
	flag  diffFlags
	check subnet.DiffCheck
}{
	{diffSwitch, subnet.DiffSwitches}, {diffCA, subnet.DiffCAs}, {diffRouter, subnet.DiffRouters},
	{diffPort, subnet.DiffPorts}, {diffLID, subnet.DiffLIDs}, {diffNodeDesc, subnet.DiffNodeDescs},
}

// topologyDiffCheck is what the topology diff compares for flags.
func topologyDiffCheck(flags diffFlags) subnet.DiffCheck {
	var c subnet.DiffCheck
	for _, m := range topologyDiffChecks {
		if flags&m.flag != 0 {
			c |= m.check
		}
	}
	return c
}
