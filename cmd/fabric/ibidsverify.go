package fabric

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/subnet"
)

// ibidsverify is infiniband-diags' Perl script of that name: it reads an
// ibnetdiscover -g topology (kept in a cache directory and reused unless
// -R) and reports LID 0, duplicate LIDs, node GUIDs and port GUIDs. ibtool
// reads a kept topology's text with the script's patterns, so a topology
// from either tool gives the same report; with -R it takes the same
// readings from the fabric it discovered (script_topology.go).

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibidsverify",
		Summary: "check the fabric for LID 0 and duplicate LIDs and GUIDs",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbidsverifyCmd(f, nil) },
	})
}

// defaultTopologyCacheDir is where infiniband-diags' scripts keep the
// topology they reuse (IBswcountlimits.pm).
const defaultTopologyCacheDir = "/var/cache/infiniband-diags"

// ibidsverifyOptions are ibidsverify's parsed flags.
type ibidsverifyOptions struct {
	IO        cmdutil.IOStreams
	Common    cmdutil.CommonOptions
	Discovery cmdutil.DiscoveryOptions
	// Regenerate is -R: discover again even when a topology is cached.
	Regenerate bool
	// CacheDir holds the reused topology file.
	CacheDir string
	// Discover discovers the fabric afresh. Topology, when set, gives a
	// fresh ibnetdiscover -g topology as text instead (one made
	// elsewhere), read as the kept file is.
	Discover func() (*subnet.Fabric, error)
	Topology func() ([]byte, error)
}

func newIbidsverifyCmd(f *cmdutil.Factory, runF func(*ibidsverifyOptions) error) *cobra.Command {
	o := &ibidsverifyOptions{IO: f.IO}
	c := &cobra.Command{
		Use:   "ibidsverify [options]",
		Short: "check the fabric for LID 0 and duplicate LIDs and GUIDs",
		Long: `ibidsverify checks the fabric's LIDs and GUIDs: a LID 0, or a LID, node GUID
or port GUID defined twice, is printed; the exit status is then 1. Like
infiniband-diags' script it reads the ibnetdiscover -g topology kept in
/var/cache/infiniband-diags/ibnetdiscover-CA-PORT.topology and discovers
(and keeps) it only when there is none or with -R.`,
		Example: "  ibidsverify -R",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if err := o.Discovery.Finish(); err != nil {
				return err
			}
			o.Discover = func() (*subnet.Fabric, error) { return cmdutil.FreshFabric(f, "ibidsverify", &o.Common, &o.Discovery) }
			if runF != nil {
				return runF(o)
			}
			return ibidsverifyRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsLocalPort|cmdutil.FlagsMAD|cmdutil.FlagsJSON)
	cmdutil.AddDiscoveryFlags(c, &o.Common, &o.Discovery)
	fl := c.Flags()
	fl.BoolVarP(&o.Regenerate, "R", "R", false, "discover again instead of reusing the cached topology")
	fl.StringVar(&o.CacheDir, "cache-dir", defaultTopologyCacheDir, "where the reused topology is kept")
	return c
}

func ibidsverifyRun(o *ibidsverifyOptions) error {
	k := &cmdutil.KeptTopology{Dir: o.CacheDir, CA: o.Common.CA, Port: o.Common.CAPort, Regenerate: o.Regenerate,
		Discover: o.Discover, Text: o.Topology}
	kept, partial := readKeptTopology(k)
	if kept == nil {
		return partial
	}
	report, bad := verifyTopologyIDs(kept.Topo)
	if o.Common.JSON {
		findings := []string{}
		for _, l := range strings.Split(strings.TrimSuffix(string(report), "\n"), "\n") {
			if l != "" {
				findings = append(findings, l)
			}
		}
		if err := cmdutil.WriteJSONDocument(o.IO.Out, struct {
			Findings []string `json:"findings"`
		}{findings}); err != nil {
			return err
		}
	} else if _, err := o.IO.Out.Write(report); err != nil {
		return err
	}
	if partial != nil {
		return partial
	}
	if bad {
		return &cmdutil.FindingsError{Summary: "LIDs or GUIDs are zero or duplicated"}
	}
	return nil
}

// ibidsverify.pl's patterns.
var (
	idsCAGUID     = &cmdutil.LazyRegexp{Expr: `^(?:caguid|rtguid)=(.*)`}
	idsSwitchGUID = &cmdutil.LazyRegexp{Expr: `^switchguid=(.*)`}
	idsSwitchBoth = &cmdutil.LazyRegexp{Expr: `^switchguid=(.*)\((.*)\)`}
	idsSwitchLine = &cmdutil.LazyRegexp{Expr: `^Switch.*"S-(.*)"\s+# (.*) port.* lid (\d+) .*`}
	// A CA's or router's port line, by the kind of node at the other end.
	idsPortPeers = []*cmdutil.LazyRegexp{
		&cmdutil.LazyRegexp{Expr: `"S-(.*)# lid (\d+) .*`},
		&cmdutil.LazyRegexp{Expr: `^.*"H-(.*)# lid (\d+) .*`},
		&cmdutil.LazyRegexp{Expr: `^.*"R-(.*)# lid (\d+) .*`},
	}
	idsPortGUID = &cmdutil.LazyRegexp{Expr: `^\[(\d+)\]\((.*)\)`}
)

// verifyTopologyIDs checks a topology as ibidsverify.pl checks its text,
// line by line: the node GUID from an IDs line, a switch's LID from its
// node line, a CA's or router's LIDs and port GUIDs from its port lines.
func verifyTopologyIDs(topo *scriptTopology) ([]byte, bool) {
	var out bytes.Buffer
	bad := false
	lids := map[string]string{}      // LID -> node GUID
	nodeGUIDs := map[string]string{} // node GUID -> LID
	portGUIDs := map[string]string{} // port GUID -> LID
	// The script compares GUIDs to 0 as strings: a GUID read as "0x0"
	// never matches, so only a bare "0" counts as zero.
	insertLID := func(lid, nodeGUID, nodeType string) {
		if lid == "0" {
			fmt.Fprintf(&out, "LID 0 found for %s NodeGUID %s\n", nodeType, nodeGUID)
			bad = true
			return
		}
		if g, ok := lids[lid]; ok {
			fmt.Fprintf(&out, "LID %s already defined for NodeGUID %s\n", lid, g)
			bad = true
			return
		}
		lids[lid] = nodeGUID
	}
	insertNodeGUID := func(lid, nodeGUID, nodeType string) {
		if nodeGUID == "0" {
			fmt.Fprintf(&out, "%s GUID 0x0 found with LID %s\n", nodeType, lid)
			bad = true
			return
		}
		if l, ok := nodeGUIDs[nodeGUID]; ok {
			fmt.Fprintf(&out, "NodeGUID %s already defined for LID %s\n", nodeGUID, l)
			bad = true
			return
		}
		nodeGUIDs[nodeGUID] = lid
	}
	insertPortGUID := func(lid, portGUID, nodeType, nodeGUID string) {
		if portGUID == "0" {
			fmt.Fprintf(&out, "%s GUID 0x0 found with LID %s\n", nodeType, lid)
			bad = true
			return
		}
		if l, ok := portGUIDs[portGUID]; ok {
			fmt.Fprintf(&out, "PortGUID %s already defined for LID %s\n", portGUID, l)
			bad = true
			return
		}
		portGUIDs[portGUID] = lid
		if _, ok := nodeGUIDs[portGUID]; ok && nodeGUID != portGUID {
			fmt.Fprintf(&out, "PortGUID %s is an invalid duplicate of a NodeGUID\n", portGUID)
			bad = true
		}
	}
	var nodeType, nodeGUID, portGUID, lid string
	firstPort := false
	// peers is the script's test of a CA's or router's port line (any
	// line in such a node's section): its LIDs, then its port GUID.
	peers := func(lids []string, guid string) {
		if nodeType != "ca" && nodeType != "router" {
			return
		}
		for _, l := range lids {
			lid = l
			insertLID(lid, nodeGUID, nodeType)
			if firstPort {
				insertNodeGUID(lid, nodeGUID, nodeType)
				firstPort = false
			}
		}
		if guid != "" {
			portGUID = guid
			insertPortGUID(lid, portGUID, nodeType, nodeGUID)
		}
	}
	for _, s := range topo.Sections {
		if ids := s.IDs; ids != nil {
			nodeGUID, nodeType = ids.NodeGUID, ""
			if ids.Switch {
				portGUID = ids.PortGUID
			}
		}
		if n := s.Node; n != nil {
			if n.LID != "" {
				nodeType, firstPort, lid = "switch", true, n.LID
				insertLID(lid, nodeGUID, nodeType)
				insertNodeGUID(lid, nodeGUID, nodeType)
				if portGUID != "" {
					insertPortGUID(lid, portGUID, nodeType, nodeGUID)
				}
			}
			switch n.Keyword {
			case "Ca":
				nodeType, firstPort = "ca", true
			case "Rt":
				nodeType, firstPort = "router", true
			}
			peers(n.PeerLIDs, "")
		}
		for _, p := range s.Ports {
			peers(p.PeerLIDs, p.GUID)
		}
	}
	return out.Bytes(), bad
}
