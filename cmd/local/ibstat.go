package local

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibstat",
		Light:   true,
		Summary: "show the state of the local InfiniBand CAs and their ports",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbstatCmd(f, nil) },
	})
}

// ibstatOptions are ibstat's parsed flags and arguments and what it reads.
type ibstatOptions struct {
	IO     cmdutil.IOStreams
	Common cmdutil.CommonOptions
	// Sysfs opens the device tree (the real /sys, --sysfs, or the
	// simulator's attach point).
	Sysfs func() (*rdma.FS, error)

	ListCAs  bool   // -l: names only
	Short    bool   // -s: CA headers only
	PortList bool   // -p: port GUIDs only
	CA       string // first argument; "" for every CA
	Port     int    // second argument; -1 for every port
}

func newIbstatCmd(f *cmdutil.Factory, runF func(*ibstatOptions) error) *cobra.Command {
	o := &ibstatOptions{IO: f.IO, Port: -1}
	c := &cobra.Command{
		Use:   "ibstat [-l | -s | -p] [CA [PORT]]",
		Short: "show the state of the local InfiniBand CAs and their ports",
		Long: `ibstat prints the local InfiniBand devices (CAs, switches, routers) as
sysfs describes them: type, firmware, GUIDs and, for each port, its state,
rate, LIDs, capability mask, port GUID and link layer. The output is that of
infiniband-diags' ibstat.

PORT is decimal or 0x hex; a leading zero is decimal, not octal.`,
		Example: `  ibstat -l          # list all IB devices
  ibstat mlx5_0 2    # stat port 2 of 'mlx5_0'
  ibstat -p          # port GUIDs of every device
  ibstat --json      # everything as one JSON document`,
		Args: cmdutil.ArgsRange(0, 2),
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Common.Finish(c); err != nil {
				return err
			}
			if len(args) > 0 {
				o.CA = args[0]
			}
			if len(args) > 1 {
				n, err := cmdutil.ParsePortNumber(args[1])
				if err != nil {
					return err
				}
				o.Port = n
			}
			o.Sysfs = func() (*rdma.FS, error) { return cmdutil.OpenLocalSysfs(f, &o.Common) }
			if runF != nil {
				return runF(o)
			}
			return ibstatRun(o)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&o.ListCAs, "list_of_cas", "l", false, "list all IB devices")
	fl.BoolVarP(&o.Short, "short", "s", false, "short output: the CA headers without ports")
	fl.BoolVarP(&o.PortList, "port_list", "p", false, "show the port GUIDs")
	cmdutil.AddCommonFlags(c, f, &o.Common, cmdutil.FlagsJSON|cmdutil.FlagsConfig)
	return c
}

// ibstatRun prints what the options ask for: infiniband-diags' ibstat main.
// What it could not read of the optional files (which ibstat shows empty,
// or the link layer as IB) and the devices whose node_type did not read
// (which it leaves out) are told after the output.
func ibstatRun(o *ibstatOptions) error {
	var problems cmdutil.SysfsProblems
	return problems.Result(ibstatShow(o, &problems))
}

// ibstatShow is ibstatRun before the problems are told.
func ibstatShow(o *ibstatOptions, problems *cmdutil.SysfsProblems) error {
	fsys, err := o.Sysfs()
	if err != nil {
		return err
	}
	names, err := ibstatNames(o, fsys, problems)
	if err != nil {
		return err
	}
	if o.Common.JSON {
		return ibstatJSONRun(o, fsys, names, problems)
	}
	switch {
	case o.PortList:
		for _, name := range names {
			d, err := ibstatDevice(fsys, name)
			if err != nil {
				return cmdutil.WithContext(err, "can't list ports")
			}
			var b bytes.Buffer
			for _, p := range d.Ports {
				if p.GUID != 0 {
					fmt.Fprintf(&b, "%s\n", p.GUID)
				}
			}
			if _, err := o.IO.Out.Write(b.Bytes()); err != nil {
				return err
			}
		}
	case o.ListCAs:
		for _, name := range names {
			if _, err := fmt.Fprintf(o.IO.Out, "%s\n", name); err != nil {
				return err
			}
		}
	default:
		for _, name := range names {
			if err := ibstatCA(o, fsys, name, problems); err != nil {
				return err
			}
		}
	}
	return nil
}

// ibstatNames returns the devices to show: every InfiniBand device, or the
// one named. Devices left out because their node_type did not read are
// problems when all are shown; the one named is an error of its own.
func ibstatNames(o *ibstatOptions, fsys *rdma.FS, problems *cmdutil.SysfsProblems) ([]string, error) {
	names, err := fsys.DeviceNames()
	var skipped *rdma.SkippedError
	switch {
	case errors.As(err, &skipped):
		if o.CA == "" {
			problems.Add(skipped)
		} else if err := skipped.Lookup(o.CA); err != nil {
			return nil, cmdutil.WithContext(err, "'%s' IB device can't be read", o.CA)
		}
	case err != nil:
		return nil, cmdutil.WithContext(err, "can't list IB device names")
	}
	if o.CA != "" {
		if !slices.Contains(names, o.CA) {
			return nil, cmdutil.UsageErrorf("'%s' IB device can't be found", o.CA)
		}
		names = []string{o.CA}
	}
	return names, nil
}

// ibstatCA prints one CA as ibstat's ca_stat does.
func ibstatCA(o *ibstatOptions, fsys *rdma.FS, name string, problems *cmdutil.SysfsProblems) error {
	d, err := ibstatDevice(fsys, name)
	if err != nil {
		return cmdutil.WithContext(err, "stat of IB device '%s' failed", name)
	}
	if d.NodeType == 0 {
		return nil
	}
	var b bytes.Buffer
	if !o.Short && o.Port >= 0 {
		p, err := ibstatPort(d, o.Port)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s: '%s'\n", ibstatNodeType(d.NodeType), d.Name)
		writeIbstatPort(&b, p, true)
		problems.AddAll(p.Unread)
	} else {
		writeIbstatCA(&b, d)
		problems.AddAll(d.Unread)
		if !o.Short {
			for _, p := range d.Ports {
				writeIbstatPort(&b, p, false)
				problems.AddAll(p.Unread)
			}
		}
	}
	_, err = o.IO.Out.Write(b.Bytes())
	return err
}

// ibstatPort returns port n of d or ibstat's complaint about it.
func ibstatPort(d *rdma.Device, n int) (*rdma.Port, error) {
	p := d.Port(n)
	if p == nil || n > d.NumPorts {
		return nil, cmdutil.UsageErrorf("%s '%s' has no port number %d - max (%d)", ibstatNodeType(d.NodeType), d.Name, n, d.NumPorts)
	}
	return p, nil
}

// umadCAMaxPorts is libibumad's UMAD_CA_MAX_PORTS: it reads ports 0 to 9
// and fails on a device with a higher port number.
const umadCAMaxPorts = 10

// ibstatDevice reads a device within the limits of libibumad, which ibstat
// inherits.
func ibstatDevice(fsys *rdma.FS, name string) (*rdma.Device, error) {
	d, err := fsys.Device(name)
	if err != nil {
		return nil, err
	}
	for _, p := range d.Ports {
		if p.Number >= umadCAMaxPorts {
			return nil, fmt.Errorf("%s: port %d: libibumad reads ports 0 to %d only",
				fsys.Path("class/infiniband/"+name+"/ports"), p.Number, umadCAMaxPorts-1)
		}
	}
	return d, nil
}

// Tables of infiniband-diags' ibstat.c: anything past their end prints
// "???", and so does index 0 of the first two.
var (
	ibstatNodeTypes  = []string{"???", "CA", "Switch", "Router", "iWARP RNIC"}
	ibstatPortStates = []string{"???", "Down", "Initializing", "Armed", "Active"}
	ibstatPhysStates = []string{"No state change", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
)

func ibstatLabel(table []string, v uint32) string {
	if uint64(v) < uint64(len(table)) {
		return table[v]
	}
	return "???"
}

func ibstatNodeType(t rdma.NodeType) string { return ibstatLabel(ibstatNodeTypes, uint32(t)) }

// cBuf cuts s to what fits a C buffer of size bytes, as libibumad's
// umad_ca_t and umad_port_t hold their strings.
func cBuf(s string, size int) string {
	if len(s) > size-1 {
		return s[:size-1]
	}
	return s
}

// writeIbstatCA writes ibstat's ca_dump.
func writeIbstatCA(b *bytes.Buffer, d *rdma.Device) {
	t := ibstatNodeType(d.NodeType)
	fmt.Fprintf(b, "%s '%s'\n", t, d.Name)
	fmt.Fprintf(b, "\t%s type: %s\n", t, cBuf(d.CAType, 40))
	fmt.Fprintf(b, "\tNumber of ports: %d\n", d.NumPorts)
	fmt.Fprintf(b, "\tFirmware version: %s\n", cBuf(d.FWVersion, 20))
	fmt.Fprintf(b, "\tHardware version: %s\n", cBuf(d.HWRevision, 20))
	fmt.Fprintf(b, "\tNode GUID: %s\n", d.NodeGUID)
	fmt.Fprintf(b, "\tSystem image GUID: %s\n", d.SysImageGUID)
}

// writeIbstatPort writes ibstat's port_dump: indented under its CA, or
// flush left when alone.
func writeIbstatPort(b *bytes.Buffer, p *rdma.Port, alone bool) {
	pre, hdrpre := "\t\t", "\t"
	if alone {
		pre, hdrpre = "", ""
	}
	fmt.Fprintf(b, "%sPort %d:\n", hdrpre, p.Number)
	fmt.Fprintf(b, "%sState: %s\n", pre, ibstatLabel(ibstatPortStates, uint32(p.State)))
	fmt.Fprintf(b, "%sPhysical state: %s\n", pre, ibstatLabel(ibstatPhysStates, uint32(p.PhysState)))
	// The rate is an unsigned printed with %d; 2 stands for 2.5 (1X SDR).
	switch rate := int32(p.RateGbps); {
	case p.FDR10():
		fmt.Fprintf(b, "%sRate: %d (FDR10)\n", pre, rate)
	case p.RateGbps != 2:
		fmt.Fprintf(b, "%sRate: %d\n", pre, rate)
	default:
		fmt.Fprintf(b, "%sRate: 2.5\n", pre)
	}
	fmt.Fprintf(b, "%sBase lid: %d\n", pre, p.LID)
	fmt.Fprintf(b, "%sLMC: %d\n", pre, p.LMC)
	fmt.Fprintf(b, "%sSM lid: %d\n", pre, p.SMLID)
	fmt.Fprintf(b, "%sCapability mask: 0x%08x\n", pre, p.CapMask)
	fmt.Fprintf(b, "%sPort GUID: %s\n", pre, p.GUID)
	fmt.Fprintf(b, "%sLink layer: %s\n", pre, cBuf(p.LinkLayer, 20))
}

// ibstatJSONCA is one CA in ibstat --json.
type ibstatJSONCA struct {
	Name            string           `json:"name"`
	NodeType        string           `json:"nodeType"`
	CAType          string           `json:"caType"`
	NumPorts        int              `json:"numPorts"`
	FirmwareVersion string           `json:"firmwareVersion"`
	HardwareVersion string           `json:"hardwareVersion"`
	NodeGUID        rdma.GUID        `json:"nodeGuid"`
	SystemImageGUID rdma.GUID        `json:"systemImageGuid"`
	Ports           []ibstatJSONPort `json:"ports,omitempty"`
}

// ibstatJSONPort is one port in ibstat --json.
type ibstatJSONPort struct {
	PortNumber            int       `json:"portNumber"`
	PortState             uint32    `json:"portState"`
	PortStateName         string    `json:"portStateName"`
	PortPhysicalState     uint32    `json:"portPhysicalState"`
	PortPhysicalStateName string    `json:"portPhysicalStateName"`
	Rate                  string    `json:"rate"`
	FDR10                 bool      `json:"fdr10"`
	LID                   rdma.LID  `json:"lid"`
	LMC                   uint8     `json:"lmc"`
	SMLID                 rdma.LID  `json:"smLid"`
	SMSL                  uint8     `json:"smSl"`
	CapabilityMask        uint32    `json:"capabilityMask"`
	PortGUID              rdma.GUID `json:"portGuid"`
	LinkLayer             string    `json:"linkLayer"`
}

// ibstatJSONRun prints what ibstatRun would as one JSON document: caNames
// for -l, portGuids for -p, cas otherwise (without ports for -s, with the
// one port for CA PORT). Nothing is printed when a device fails.
func ibstatJSONRun(o *ibstatOptions, fsys *rdma.FS, names []string, problems *cmdutil.SysfsProblems) error {
	switch {
	case o.PortList:
		guids := []rdma.GUID{}
		for _, name := range names {
			d, err := ibstatDevice(fsys, name)
			if err != nil {
				return cmdutil.WithContext(err, "can't list ports")
			}
			for _, p := range d.Ports {
				if p.GUID != 0 {
					guids = append(guids, p.GUID)
				}
			}
		}
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			PortGUIDs []rdma.GUID `json:"portGuids"`
		}{guids})
	case o.ListCAs:
		return cmdutil.WriteJSONDocument(o.IO.Out, struct {
			CANames []string `json:"caNames"`
		}{append([]string{}, names...)})
	}
	cas := []ibstatJSONCA{}
	for _, name := range names {
		d, err := ibstatDevice(fsys, name)
		if err != nil {
			return cmdutil.WithContext(err, "stat of IB device '%s' failed", name)
		}
		if d.NodeType == 0 {
			continue
		}
		ports := d.Ports
		switch {
		case o.Short:
			ports = nil
		case o.Port >= 0:
			p, err := ibstatPort(d, o.Port)
			if err != nil {
				return err
			}
			ports = []*rdma.Port{p}
		}
		problems.AddAll(d.Unread) // every form shows the CA's fields
		ca := ibstatJSONCA{
			Name: d.Name, NodeType: d.NodeType.String(), CAType: d.CAType, NumPorts: d.NumPorts,
			FirmwareVersion: d.FWVersion, HardwareVersion: d.HWRevision,
			NodeGUID: d.NodeGUID, SystemImageGUID: d.SysImageGUID,
		}
		for _, p := range ports {
			problems.AddAll(p.Unread)
			ca.Ports = append(ca.Ports, ibstatJSONPort{
				PortNumber: p.Number,
				PortState:  uint32(p.State), PortStateName: p.State.String(),
				PortPhysicalState: uint32(p.PhysState), PortPhysicalStateName: p.PhysState.String(),
				Rate: p.Rate, FDR10: p.FDR10(),
				LID: p.LID, LMC: p.LMC, SMLID: p.SMLID, SMSL: p.SMSL,
				CapabilityMask: p.CapMask, PortGUID: p.GUID, LinkLayer: p.LinkLayer,
			})
		}
		cas = append(cas, ca)
	}
	return cmdutil.WriteJSONDocument(o.IO.Out, struct {
		CAs []ibstatJSONCA `json:"cas"`
	}{cas})
}
