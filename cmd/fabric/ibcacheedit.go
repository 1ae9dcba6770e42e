package fabric

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/subnet"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibcacheedit",
		Summary: "edit the GUIDs in an ibnetdiscover cache file",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbcacheeditCmd(f, nil) },
	})
}

// guidEdit is one BEFORE:AFTER GUID change; Node, for --portguid, is the
// GUID of the node whose port it is.
type guidEdit struct {
	Node, Before, After rdma.GUID
	set                 bool
}

// ibcacheeditOptions are ibcacheedit's parsed flags and arguments.
type ibcacheeditOptions struct {
	IO                                       cmdutil.IOStreams
	Common                                   cmdutil.CommonOptions
	SwitchGUID, CAGUID, SysImgGUID, PortGUID guidEdit
	Orig, New                                string
}

func newIbcacheeditCmd(f *cmdutil.Factory, runF func(*ibcacheeditOptions) error) *cobra.Command {
	o := &ibcacheeditOptions{IO: f.IO}
	var sw, ca, sys, port string
	c := &cobra.Command{
		Use:   "ibcacheedit [options] <orig.cache> <new.cache>",
		Short: "edit the GUIDs in an ibnetdiscover cache file",
		Long: `ibcacheedit reads a cache file ibnetdiscover --cache wrote, changes a switch,
CA, system image or port GUID in it, and writes the new cache, as
infiniband-diags' ibcacheedit does: for a replaced board, say, so that a
cached fabric still diffs cleanly against the live one.`,
		Example: `  ibcacheedit --switchguid 0x0002c90200401234:0x0002c90200405678 old.cache new.cache
  ibcacheedit --portguid 0x100000:0x100001:0x100011 old.cache new.cache`,
		Args: ibcacheeditArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			for _, e := range []struct {
				name, arg string
				dst       *guidEdit
				parts     int
			}{{"switchguid", sw, &o.SwitchGUID, 2}, {"caguid", ca, &o.CAGUID, 2}, {"sysimgguid", sys, &o.SysImgGUID, 2}, {"portguid", port, &o.PortGUID, 3}} {
				if !c.Flags().Changed(e.name) {
					continue
				}
				g, err := parseGUIDEdit(e.arg, e.parts)
				if err != nil {
					return cmdutil.UsageErrorf("--%s %q: %v", e.name, e.arg, err)
				}
				*e.dst = g
			}
			o.Orig, o.New = args[0], args[1]
			if runF != nil {
				return runF(o)
			}
			return ibcacheeditRun(o)
		},
	}
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsConfig)
	fl := c.Flags()
	fl.StringVar(&sw, "switchguid", "", "BEFOREGUID:AFTERGUID: the switch GUID to change")
	fl.StringVar(&ca, "caguid", "", "BEFOREGUID:AFTERGUID: the CA GUID to change")
	fl.StringVar(&sys, "sysimgguid", "", "BEFOREGUID:AFTERGUID: the system image GUID to change")
	fl.StringVar(&port, "portguid", "", "NODEGUID:BEFOREGUID:AFTERGUID: the port GUID to change")
	return c
}

// ibcacheeditArgs wants the two cache files and names the one missing, as
// infiniband-diags' ibcacheedit does, but as a usage error (exit 2, with
// the hint to --help) rather than its iberror (exit 255).
func ibcacheeditArgs(c *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return &cmdutil.UsageError{Err: errors.New("original cache file not specified"), Syntax: true}
	case 1:
		return &cmdutil.UsageError{Err: errors.New("new cache file not specified"), Syntax: true}
	}
	return cmdutil.ArgsRange(2, 2)(c, args)
}

// parseGUIDEdit parses BEFORE:AFTER (parts 2) or NODE:BEFORE:AFTER
// (parts 3).
func parseGUIDEdit(s string, parts int) (guidEdit, error) {
	f := strings.Split(s, ":")
	if len(f) != parts {
		if parts == 2 {
			return guidEdit{}, fmt.Errorf("want BEFOREGUID:AFTERGUID")
		}
		return guidEdit{}, fmt.Errorf("want NODEGUID:BEFOREGUID:AFTERGUID")
	}
	var g [3]rdma.GUID
	for i, v := range f {
		var err error
		if g[i], err = rdma.ParseGUID(v); err != nil {
			return guidEdit{}, err
		}
	}
	if parts == 2 {
		return guidEdit{Before: g[0], After: g[1], set: true}, nil
	}
	return guidEdit{Node: g[0], Before: g[1], After: g[2], set: true}, nil
}

func ibcacheeditRun(o *ibcacheeditOptions) error {
	fab, err := cmdutil.LoadFabric(o.Orig)
	if err != nil {
		return err
	}
	// A switch's ports carry its GUID: change them with it.
	renameNode := func(n *subnet.Node, g rdma.GUID) {
		n.GUID = g
		if n.Type == mad.NodeTypeSwitch {
			for _, p := range n.Ports {
				if p != nil {
					p.GUID = g
				}
			}
		}
	}
	for _, e := range []struct {
		edit guidEdit
		typ  mad.NodeType
		what string
	}{{o.SwitchGUID, mad.NodeTypeSwitch, "switchguid"}, {o.CAGUID, mad.NodeTypeCA, "caguid"}} {
		if !e.edit.set {
			continue
		}
		found := false
		for _, n := range fab.ByType(e.typ) {
			if n.GUID == e.edit.Before {
				renameNode(n, e.edit.After)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s = %x not found", e.what, uint64(e.edit.Before))
		}
	}
	if e := o.SysImgGUID; e.set {
		found := false
		for _, n := range fab.All() {
			if n.Info.SystemImageGUID == e.Before {
				n.SetSystemImageGUID(e.After)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("sysimgguid = %x not found", uint64(e.Before))
		}
	}
	if e := o.PortGUID; e.set {
		nodeFound, found := false, false
		for _, n := range fab.All() {
			if n.GUID != e.Node {
				continue
			}
			nodeFound = true
			if n.Type == mad.NodeTypeSwitch {
				if n.GUID == e.Before {
					renameNode(n, e.After)
					found = true
				}
				continue
			}
			for num := 1; num <= n.NumPorts; num++ {
				if p := n.Port(num); p != nil && p.GUID == e.Before {
					p.GUID = e.After
					found = true
					break
				}
			}
		}
		if !nodeFound {
			return fmt.Errorf("nodeguid = %x not found", uint64(e.Node))
		}
		if !found {
			return fmt.Errorf("portguid = %x not found", uint64(e.Before))
		}
	}
	if err := cmdutil.SaveFabric(o.New, fab); err != nil {
		return fmt.Errorf("caching new cache data failed: %w", err)
	}
	return nil
}
