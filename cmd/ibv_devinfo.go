package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	register(Tool{
		Name:    "ibv_devinfo",
		Summary: "show RDMA devices and their ports through libibverbs",
		New:     func(f *Factory) *cobra.Command { return newIbvDevinfoCmd(f, nil) },
	})
}

// ibvDevinfoOptions are ibv_devinfo's parsed flags.
type ibvDevinfoOptions struct {
	IO     IOStreams
	Device string // -d
	Port   int    // -i; 0: every port
	List   bool   // -l
	JSON   bool
	// Devices lists the devices (libibverbs; a fake in tests), Names only
	// their names.
	Devices func() ([]verbs.Device, error)
	Names   func() ([]string, error)
	// BoardID reads a device's board_id from its sysfs directory.
	BoardID func(d *verbs.Device) string
	portArg string
}

func newIbvDevinfoCmd(f *Factory, runF func(*ibvDevinfoOptions) error) *cobra.Command {
	o := &ibvDevinfoOptions{IO: f.IO, Devices: verbs.Devices, Names: verbs.DeviceNames, BoardID: sysfsBoardID}
	c := &cobra.Command{
		Use:   "ibv_devinfo [options]",
		Short: "show RDMA devices and their ports through libibverbs",
		Long: `ibv_devinfo opens each RDMA device through libibverbs and prints its
attributes and its ports', as rdma-core's ibv_devinfo does.`,
		Example: `  ibv_devinfo
  ibv_devinfo -d mlx5_0 -i 1
  ibv_devinfo -l`,
		Args: argsRange(0, 0),
		RunE: func(c *cobra.Command, args []string) error {
			if o.portArg != "" {
				n, err := parsePortNumber(o.portArg)
				if err == nil && (n <= 0 || n > 255) {
					err = usageErrorf("invalid port %q: want 1 to 255", o.portArg)
				}
				if err != nil {
					return err
				}
				o.Port = n
			}
			if runF != nil {
				return runF(o)
			}
			return ibvDevinfoRun(o)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&o.Device, "ib-dev", "d", "", "use IB device <dev> (default all devices)")
	fl.StringVarP(&o.portArg, "ib-port", "i", "", "use port <port> of IB device (default all ports)")
	fl.BoolVarP(&o.List, "list", "l", false, "print only the IB devices names")
	fl.BoolVar(&o.JSON, "json", false, "one JSON document")
	return c
}

// sysfsBoardID reads board_id from the device's sysfs directory, as
// libibverbs' ibv_read_sysfs_file does: one trailing newline dropped.
func sysfsBoardID(d *verbs.Device) string {
	if d.IBDevPath == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(d.IBDevPath, "board_id"))
	if err != nil || len(b) == 0 {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

func ibvDevinfoRun(o *ibvDevinfoOptions) error {
	if o.List {
		names, err := o.Names()
		if err != nil {
			return err
		}
		if o.JSON {
			return writeJSONDocument(o.IO.Out, map[string]any{"devices": names})
		}
		s := "s"
		if len(names) == 1 {
			s = ""
		}
		b := fmt.Appendf(nil, "%d HCA%s found:\n", len(names), s)
		for _, n := range names {
			b = fmt.Appendf(b, "\t%s\n", n)
		}
		b = append(b, '\n')
		_, err = o.IO.Out.Write(b)
		return err
	}
	devs, err := o.Devices()
	if err != nil {
		return err
	}
	if o.Device != "" {
		var picked []verbs.Device
		for _, d := range devs {
			if d.Name == o.Device {
				picked = append(picked, d)
				break
			}
		}
		if picked == nil {
			return usageErrorf("IB device '%s' wasn't found", o.Device)
		}
		devs = picked
	} else if len(devs) == 0 {
		return errors.New("no IB devices found")
	}
	var b []byte
	var doc []map[string]any
	for i := range devs {
		d := &devs[i]
		if o.Port > d.PhysPortCnt {
			if _, err := o.IO.Out.Write(b); err != nil {
				return err
			}
			return usageErrorf("%s: invalid port %d requested: the device has %d", d.Name, o.Port, d.PhysPortCnt)
		}
		board := o.BoardID(d)
		b = appendDevinfo(b, d, board, o.Port)
		doc = append(doc, map[string]any{"hcaId": d.Name, "device": d, "boardId": board})
	}
	if o.JSON {
		return writeJSONDocument(o.IO.Out, map[string]any{"devices": doc})
	}
	_, err = o.IO.Out.Write(b)
	return err
}

// appendDevinfo is devinfo.c's print_hca_cap without -v.
func appendDevinfo(b []byte, d *verbs.Device, board string, onlyPort int) []byte {
	b = fmt.Appendf(b, "hca_id:\t%s\n", d.Name)
	b = fmt.Appendf(b, "\ttransport:\t\t\t%s (%d)\n", transportStr(d.Transport), d.Transport)
	if d.FWVer != "" {
		b = fmt.Appendf(b, "\tfw_ver:\t\t\t\t%s\n", d.FWVer)
	}
	b = fmt.Appendf(b, "\tnode_guid:\t\t\t%s\n", guidQuads(d.NodeGUID))
	b = fmt.Appendf(b, "\tsys_image_guid:\t\t\t%s\n", guidQuads(d.SysImageGUID))
	b = fmt.Appendf(b, "\tvendor_id:\t\t\t0x%04x\n", d.VendorID)
	b = fmt.Appendf(b, "\tvendor_part_id:\t\t\t%d\n", d.VendorPartID)
	b = fmt.Appendf(b, "\thw_ver:\t\t\t\t0x%X\n", d.HWVer)
	if board != "" {
		b = fmt.Appendf(b, "\tboard_id:\t\t\t%s\n", board)
	}
	b = fmt.Appendf(b, "\tphys_port_cnt:\t\t\t%d\n", d.PhysPortCnt)
	for _, p := range d.Ports {
		if onlyPort != 0 && p.Num != onlyPort {
			continue
		}
		b = fmt.Appendf(b, "\t\tport:\t%d\n", p.Num)
		b = fmt.Appendf(b, "\t\t\tstate:\t\t\t%s (%d)\n", verbsPortState(p.State), p.State)
		b = fmt.Appendf(b, "\t\t\tmax_mtu:\t\t%s (%d)\n", verbsMTU(p.MaxMTU), p.MaxMTU)
		b = fmt.Appendf(b, "\t\t\tactive_mtu:\t\t%s (%d)\n", verbsMTU(p.ActiveMTU), p.ActiveMTU)
		b = fmt.Appendf(b, "\t\t\tsm_lid:\t\t\t%d\n", p.SMLID)
		b = fmt.Appendf(b, "\t\t\tport_lid:\t\t%d\n", p.LID)
		b = fmt.Appendf(b, "\t\t\tport_lmc:\t\t0x%02x\n", p.LMC)
		b = fmt.Appendf(b, "\t\t\tlink_layer:\t\t%s\n", linkLayerStr(p.LinkLayer))
		b = append(b, '\n')
	}
	return b
}

// guidQuads formats a GUID as devinfo.c's guid_str: four groups of four
// hex digits.
func guidQuads(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48&0xffff, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

func transportStr(t int) string {
	switch t {
	case verbs.TransportIB:
		return "InfiniBand"
	case verbs.TransportIWARP:
		return "iWARP"
	case verbs.TransportUSNIC:
		return "usNIC"
	case verbs.TransportUSNICUDP:
		return "usNIC UDP"
	case verbs.TransportUnspecified:
		return "unspecified"
	}
	return "invalid transport"
}

func verbsPortState(s int) string {
	switch s {
	case 1:
		return "PORT_DOWN"
	case 2:
		return "PORT_INIT"
	case 3:
		return "PORT_ARMED"
	case 4:
		return "PORT_ACTIVE"
	}
	return "invalid state"
}

func verbsMTU(m int) string {
	switch m {
	case 1, 2, 3, 4, 5:
		return fmt.Sprint(128 << m)
	}
	return "invalid MTU"
}

func linkLayerStr(l int) string {
	switch l {
	case verbs.LinkLayerUnspecified:
		return "Unspecified"
	case verbs.LinkLayerInfiniBand:
		return "InfiniBand"
	case verbs.LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}
