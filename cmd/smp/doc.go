// Package smp holds the tools that query and set a node by SMPs: smpquery,
// smpdump, ibaddr, sminfo, ibportstate, query (any attribute by name) and
// ibsendtrap. They send typed Gets and Sets (mad.Querier) and render the
// typed replies as infiniband-diags prints them.
package smp
