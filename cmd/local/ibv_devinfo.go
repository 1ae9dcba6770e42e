package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/pkg/rdma"
	"github.com/ibtool/ibtool/pkg/verbs"
)

func init() {
	cmdutil.Register(cmdutil.Tool{
		Name:    "ibv_devinfo",
		Light:   true,
		Summary: "show RDMA devices and their ports through libibverbs",
		New:     func(f *cmdutil.Factory) *cobra.Command { return newIbvDevinfoCmd(f, nil) },
	})
}

// ibvDevinfoOptions are ibv_devinfo's parsed flags.
type ibvDevinfoOptions struct {
	IO     cmdutil.IOStreams
	Device string // -d
	Port   int    // -i; 0: every port
	List   bool   // -l
	// Verbose is -v: every attribute of the device and its ports, and
	// the ports' GIDs.
	Verbose bool
	JSON    bool
	// Devices lists the devices (libibverbs; a fake in tests), Names only
	// their names.
	Devices func() ([]verbs.Device, error)
	Names   func() ([]string, error)
	// BoardID reads a device's board_id from its sysfs directory: "" and
	// no error when the driver writes none.
	BoardID func(d *verbs.Device) (string, error)
	portArg string
}

func newIbvDevinfoCmd(f *cmdutil.Factory, runF func(*ibvDevinfoOptions) error) *cobra.Command {
	o := &ibvDevinfoOptions{IO: f.IO, Devices: verbs.Devices, Names: verbs.DeviceNames, BoardID: sysfsBoardID}
	c := &cobra.Command{
		Use:   "ibv_devinfo [options]",
		Short: "show RDMA devices and their ports through libibverbs",
		Long: `ibv_devinfo opens each RDMA device through libibverbs and prints its
attributes and its ports', as rdma-core's ibv_devinfo does.`,
		Example: `  ibv_devinfo
  ibv_devinfo -d mlx5_0 -i 1
  ibv_devinfo -l`,
		Args: cmdutil.ArgsRange(0, 0),
		RunE: func(c *cobra.Command, args []string) error {
			if o.portArg != "" {
				n, err := cmdutil.ParsePortNumber(o.portArg)
				if err == nil && (n <= 0 || n > 255) {
					err = cmdutil.UsageErrorf("invalid port %q: want 1 to 255", o.portArg)
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
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "print all the attributes of the IB device(s)")
	fl.BoolVar(&o.JSON, "json", false, "one JSON document")
	return c
}

// sysfsBoardID reads board_id from the device's sysfs directory, as
// libibverbs' ibv_read_sysfs_file does: one trailing newline dropped. Some
// drivers (rxe, siw) write none; one that is there and does not read is
// an error, though ibv_devinfo leaves the line out either way.
func sysfsBoardID(d *verbs.Device) (string, error) {
	if d.IBDevPath == "" {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(d.IBDevPath, "board_id"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

func ibvDevinfoRun(o *ibvDevinfoOptions) error {
	if o.List {
		names, err := o.Names()
		if err != nil {
			return err
		}
		if o.JSON {
			return cmdutil.WriteJSONDocument(o.IO.Out, ibvDevinfoNames{Devices: names})
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
			return cmdutil.UsageErrorf("IB device '%s' wasn't found", o.Device)
		}
		devs = picked
	} else if len(devs) == 0 {
		return errors.New("no IB devices found")
	}
	var b []byte
	var doc []ibvDevinfoDevice
	var problems cmdutil.SysfsProblems
	for i := range devs {
		d := &devs[i]
		if o.Port > d.PhysPortCnt {
			if _, err := o.IO.Out.Write(b); err != nil {
				return err
			}
			return problems.Result(cmdutil.UsageErrorf("%s: invalid port %d requested: the device has %d", d.Name, o.Port, d.PhysPortCnt))
		}
		board, err := o.BoardID(d)
		if err != nil {
			problems.Add(err)
		}
		b = appendDevinfo(b, d, board, o.Port, o.Verbose)
		doc = append(doc, ibvDevinfoDevice{HCAID: d.Name, Device: d, BoardID: board})
	}
	if o.JSON {
		return problems.Result(cmdutil.WriteJSONDocument(o.IO.Out, ibvDevinfoDoc{Devices: doc}))
	}
	_, err = o.IO.Out.Write(b)
	return problems.Result(err)
}

// ibvDevinfoNames is the --json document of -l.
type ibvDevinfoNames struct {
	Devices []string `json:"devices"`
}

// ibvDevinfoDoc is the --json document: every device shown, with its
// board ID, which is not one of the device's verbs attributes.
type ibvDevinfoDoc struct {
	Devices []ibvDevinfoDevice `json:"devices"`
}

// ibvDevinfoDevice is one device of ibvDevinfoDoc.
type ibvDevinfoDevice struct {
	BoardID string        `json:"boardId"`
	Device  *verbs.Device `json:"device"`
	HCAID   string        `json:"hcaId"`
}

// appendDevinfo is devinfo.c's print_hca_cap.
func appendDevinfo(b []byte, d *verbs.Device, board string, onlyPort int, verbose bool) []byte {
	b = fmt.Appendf(b, "hca_id:\t%s\n", d.Name)
	b = fmt.Appendf(b, "\ttransport:\t\t\t%s (%d)\n", d.Transport, int(d.Transport))
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
	if verbose {
		b = appendDeviceVerbose(b, &d.Attr)
	}
	for _, p := range d.Ports {
		if onlyPort != 0 && p.Num != onlyPort {
			continue
		}
		b = fmt.Appendf(b, "\t\tport:\t%d\n", p.Num)
		b = fmt.Appendf(b, "\t\t\tstate:\t\t\t%s (%d)\n", p.State, int(p.State))
		b = fmt.Appendf(b, "\t\t\tmax_mtu:\t\t%s (%d)\n", p.MaxMTU, int(p.MaxMTU))
		b = fmt.Appendf(b, "\t\t\tactive_mtu:\t\t%s (%d)\n", p.ActiveMTU, int(p.ActiveMTU))
		b = fmt.Appendf(b, "\t\t\tsm_lid:\t\t\t%d\n", p.SMLID)
		b = fmt.Appendf(b, "\t\t\tport_lid:\t\t%d\n", p.LID)
		b = fmt.Appendf(b, "\t\t\tport_lmc:\t\t0x%02x\n", p.LMC)
		b = fmt.Appendf(b, "\t\t\tlink_layer:\t\t%s\n", p.LinkLayer)
		if verbose {
			b = appendPortVerbose(b, d, &p)
		}
		b = append(b, '\n')
	}
	return b
}

// guidQuads formats a GUID as devinfo.c's guid_str: four groups of four
// hex digits.
func guidQuads(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48&0xffff, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// verbsFlag names one bit of a capability mask, as devinfo.c prints it.
type verbsFlag struct {
	bit  uint64
	name string
}

// deviceCapFlags are IBV_DEVICE_* (enum ibv_device_cap_flags).
var deviceCapFlags = []verbsFlag{
	{1 << 0, "RESIZE_MAX_WR"}, {1 << 1, "BAD_PKEY_CNTR"}, {1 << 2, "BAD_QKEY_CNTR"}, {1 << 3, "RAW_MULTI"},
	{1 << 4, "AUTO_PATH_MIG"}, {1 << 5, "CHANGE_PHY_PORT"}, {1 << 6, "UD_AV_PORT_ENFORCE"}, {1 << 7, "CURR_QP_STATE_MOD"},
	{1 << 8, "SHUTDOWN_PORT"}, {1 << 9, "INIT_TYPE"}, {1 << 10, "PORT_ACTIVE_EVENT"}, {1 << 11, "SYS_IMAGE_GUID"},
	{1 << 12, "RC_RNR_NAK_GEN"}, {1 << 13, "SRQ_RESIZE"}, {1 << 14, "N_NOTIFY_CQ"}, {1 << 17, "MEM_WINDOW"},
	{1 << 18, "UD_IP_CSUM"}, {1 << 20, "XRC"}, {1 << 21, "MEM_MGT_EXTENSIONS"}, {1 << 23, "MEM_WINDOW_TYPE_2A"},
	{1 << 24, "MEM_WINDOW_TYPE_2B"}, {1 << 25, "RC_IP_CSUM"}, {1 << 26, "RAW_IP_CSUM"}, {1 << 29, "MANAGED_FLOW_STEERING"},
}

var (
	deviceCapFlagsEx = []verbsFlag{{1 << 34, "RAW_SCATTER_FCS"}, {1 << 36, "PCI_WRITE_END_PADDING"}}
	odpGeneralCaps   = []verbsFlag{{1 << 0, "ODP_SUPPORT"}, {1 << 1, "ODP_SUPPORT_IMPLICIT"}}
	odpTransportCaps = []verbsFlag{{1 << 0, "SUPPORT_SEND"}, {1 << 1, "SUPPORT_RECV"}, {1 << 2, "SUPPORT_WRITE"},
		{1 << 3, "SUPPORT_READ"}, {1 << 4, "SUPPORT_ATOMIC"}, {1 << 5, "SUPPORT_SRQ"}}
	rawPacketCaps = []verbsFlag{{1 << 0, "C-VLAN stripping offload"}, {1 << 1, "Scatter FCS offload"},
		{1 << 2, "IP csum offload"}, {1 << 3, "Delay drop"}}
	qpTypeCaps = []verbsFlag{{1 << 8, "SUPPORT_RAW_PACKET"}, {1 << 4, "SUPPORT_UD"}} // 1 << IBV_QPT_*
)

// appendFlags prints the set flags one a line, then unknown bits as
// devinfo.c does ("Unknown flags: 0x%X"); known limits what counts as
// known when it differs from flags (the QP type masks).
func appendFlags(b []byte, v uint64, flags []verbsFlag) []byte {
	var known uint64
	for _, f := range flags {
		known |= f.bit
		if v&f.bit != 0 {
			b = fmt.Appendf(b, "\t\t\t\t\t%s\n", f.name)
		}
	}
	if v&^known != 0 {
		b = fmt.Appendf(b, "\t\t\t\t\tUnknown flags: 0x%X\n", v&^known)
	}
	return b
}

func atomicCapStr(c int) string {
	switch c {
	case 0:
		return "ATOMIC_NONE"
	case 1:
		return "ATOMIC_HCA"
	case 2:
		return "ATOMIC_GLOB"
	}
	return "invalid atomic capability"
}

// appendDeviceVerbose is the -v part of print_hca_cap's device lines.
func appendDeviceVerbose(b []byte, a *verbs.Attr) []byte {
	p := func(format string, args ...any) { b = fmt.Appendf(b, format, args...) }
	p("\tmax_mr_size:\t\t\t0x%x\n", a.MaxMRSize)
	p("\tpage_size_cap:\t\t\t0x%x\n", a.PageSizeCap)
	p("\tmax_qp:\t\t\t\t%d\n", a.MaxQP)
	p("\tmax_qp_wr:\t\t\t%d\n", a.MaxQPWR)
	p("\tdevice_cap_flags:\t\t0x%08x\n", a.DeviceCapFlags)
	b = appendFlags(b, uint64(a.DeviceCapFlags), deviceCapFlags)
	p("\tmax_sge:\t\t\t%d\n", a.MaxSGE)
	p("\tmax_sge_rd:\t\t\t%d\n", a.MaxSGERd)
	p("\tmax_cq:\t\t\t\t%d\n", a.MaxCQ)
	p("\tmax_cqe:\t\t\t%d\n", a.MaxCQE)
	p("\tmax_mr:\t\t\t\t%d\n", a.MaxMR)
	p("\tmax_pd:\t\t\t\t%d\n", a.MaxPD)
	p("\tmax_qp_rd_atom:\t\t\t%d\n", a.MaxQPRdAtom)
	p("\tmax_ee_rd_atom:\t\t\t%d\n", a.MaxEERdAtom)
	p("\tmax_res_rd_atom:\t\t%d\n", a.MaxResRdAtom)
	p("\tmax_qp_init_rd_atom:\t\t%d\n", a.MaxQPInitRdAtom)
	p("\tmax_ee_init_rd_atom:\t\t%d\n", a.MaxEEInitRdAtom)
	p("\tatomic_cap:\t\t\t%s (%d)\n", atomicCapStr(a.AtomicCap), a.AtomicCap)
	p("\tmax_ee:\t\t\t\t%d\n", a.MaxEE)
	p("\tmax_rdd:\t\t\t%d\n", a.MaxRDD)
	p("\tmax_mw:\t\t\t\t%d\n", a.MaxMW)
	p("\tmax_raw_ipv6_qp:\t\t%d\n", a.MaxRawIPv6QP)
	p("\tmax_raw_ethy_qp:\t\t%d\n", a.MaxRawEthQP)
	p("\tmax_mcast_grp:\t\t\t%d\n", a.MaxMcastGrp)
	p("\tmax_mcast_qp_attach:\t\t%d\n", a.MaxMcastQPAttach)
	p("\tmax_total_mcast_qp_attach:\t%d\n", a.MaxTotalMcastQPAttach)
	p("\tmax_ah:\t\t\t\t%d\n", a.MaxAH)
	p("\tmax_fmr:\t\t\t%d\n", a.MaxFMR)
	if a.MaxFMR != 0 {
		p("\tmax_map_per_fmr:\t\t%d\n", a.MaxMapPerFMR)
	}
	p("\tmax_srq:\t\t\t%d\n", a.MaxSRQ)
	if a.MaxSRQ != 0 {
		p("\tmax_srq_wr:\t\t\t%d\n", a.MaxSRQWR)
		p("\tmax_srq_sge:\t\t\t%d\n", a.MaxSRQSGE)
	}
	p("\tmax_pkeys:\t\t\t%d\n", a.MaxPKeys)
	p("\tlocal_ca_ack_delay:\t\t%d\n", a.LocalCAAckDelay)
	p("\tgeneral_odp_caps:\n")
	b = appendFlags(b, a.ODPGeneralCaps, odpGeneralCaps)
	for _, t := range []struct {
		name string
		caps uint32
	}{{"rc", a.ODPRC}, {"uc", a.ODPUC}, {"ud", a.ODPUD}, {"xrc", a.ODPXRC}} {
		p("\t%s_odp_caps:\n", t.name)
		if t.caps == 0 {
			p("\t\t\t\t\tNO SUPPORT\n")
		} else {
			b = appendFlags(b, uint64(t.caps), odpTransportCaps)
		}
	}
	if a.CompletionTimestampMask != 0 {
		p("\tcompletion timestamp_mask:\t\t\t0x%016x\n", a.CompletionTimestampMask)
	} else {
		p("\tcompletion_timestamp_mask not supported\n")
	}
	if a.HCACoreClock != 0 {
		p("\thca_core_clock:\t\t\t%dkHZ\n", a.HCACoreClock)
	} else {
		p("\tcore clock not supported\n")
	}
	if a.RawPacketCaps != 0 {
		p("\traw packet caps:\n")
		for _, f := range rawPacketCaps {
			if uint64(a.RawPacketCaps)&f.bit != 0 {
				p("\t\t\t\t\t%s\n", f.name)
			}
		}
	}
	p("\tdevice_cap_flags_ex:\t\t0x%X\n", a.DeviceCapFlagsEx)
	b = appendFlags(b, a.DeviceCapFlagsEx&0xffffffff00000000, deviceCapFlagsEx)
	p("\ttso_caps:\n\t\tmax_tso:\t\t\t%d\n", a.MaxTSO)
	if a.MaxTSO != 0 {
		p("\t\tsupported_qp:\n")
		b = appendFlags(b, uint64(a.TSOQPTs), qpTypeCaps)
	}
	p("\trss_caps:\n")
	p("\t\tmax_rwq_indirection_tables:\t\t\t%d\n", a.MaxRWQIndirectionTables)
	p("\t\tmax_rwq_indirection_table_size:\t\t\t%d\n", a.MaxRWQIndirectionTableSize)
	p("\t\trx_hash_function:\t\t\t\t0x%x\n", a.RXHashFunction)
	p("\t\trx_hash_fields_mask:\t\t\t\t0x%X\n", a.RXHashFieldsMask)
	if a.RSSQPTs != 0 {
		p("\t\tsupported_qp:\n")
		b = appendFlags(b, uint64(a.RSSQPTs), qpTypeCaps)
	}
	p("\tmax_wq_type_rq:\t\t\t%d\n", a.MaxWQTypeRQ)
	p("\tpacket_pacing_caps:\n")
	p("\t\tqp_rate_limit_min:\t%dkbps\n", a.QPRateLimitMin)
	p("\t\tqp_rate_limit_max:\t%dkbps\n", a.QPRateLimitMax)
	if a.QPRateLimitMax != 0 {
		p("\t\tsupported_qp:\n")
		b = appendFlags(b, uint64(a.PacingQPTs), qpTypeCaps)
	}
	if a.TMMaxNumTags != 0 {
		p("\tmax_rndv_hdr_size:\t\t%d\n", a.TMMaxRndvHdrSize)
		p("\tmax_num_tags:\t\t\t%d\n", a.TMMaxNumTags)
		p("\tmax_ops:\t\t\t%d\n", a.TMMaxOps)
		p("\tmax_sge:\t\t\t%d\n", a.TMMaxSGE)
		p("\tflags:\n")
		if a.TMFlags&1 != 0 {
			p("\t\t\t\t\tIBV_TM_CAP_RC\n")
		}
	} else {
		p("\ttag matching not supported\n")
	}
	if a.MaxCQCount != 0 && a.MaxCQPeriod != 0 {
		p("\n\tcq moderation caps:\n\t\tmax_cq_count:\t%d\n\t\tmax_cq_period:\t%d us\n\n", a.MaxCQCount, a.MaxCQPeriod)
	}
	if a.MaxDMSize != 0 {
		p("\tmaximum available device memory:\t%dBytes\n\n", a.MaxDMSize)
	}
	p("\tnum_comp_vectors:\t\t%d\n", a.NumCompVectors)
	return b
}

func widthStr(w uint8) string {
	switch w {
	case 1:
		return "1"
	case 2:
		return "4"
	case 4:
		return "8"
	case 8:
		return "12"
	case 16:
		return "2"
	}
	return "invalid width"
}

func speedStr(s uint8) string {
	switch s {
	case 1:
		return "2.5 Gbps"
	case 2:
		return "5.0 Gbps"
	case 4, 8:
		return "10.0 Gbps"
	case 16:
		return "14.0 Gbps"
	case 32:
		return "25.0 Gbps"
	case 64:
		return "50.0 Gbps"
	case 128:
		return "100.0 Gbps"
	}
	return "invalid speed"
}

func vlStr(v uint8) string {
	switch v {
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "4"
	case 4:
		return "8"
	case 5:
		return "15"
	}
	return "invalid value"
}

func physStateStr(s uint8) string {
	names := []string{1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "PORT_CONFIGURATION TRAINNING", 5: "LINK_UP", 6: "LINK_ERROR_RECOVERY", 7: "PHY TEST"}
	if int(s) < len(names) && names[s] != "" {
		return names[s]
	}
	return "invalid physical state"
}

// appendPortVerbose is the -v part of a port's lines, GIDs included.
func appendPortVerbose(b []byte, d *verbs.Device, pt *verbs.Port) []byte {
	p := func(format string, args ...any) { b = fmt.Appendf(b, format, args...) }
	p("\t\t\tmax_msg_sz:\t\t0x%x\n", pt.MaxMsgSz)
	p("\t\t\tport_cap_flags:\t\t0x%08x\n", pt.PortCapFlags)
	p("\t\t\tport_cap_flags2:\t0x%04x\n", pt.PortCapFlags2)
	p("\t\t\tmax_vl_num:\t\t%s (%d)\n", vlStr(pt.MaxVLNum), pt.MaxVLNum)
	p("\t\t\tbad_pkey_cntr:\t\t0x%x\n", pt.BadPKeyCntr)
	p("\t\t\tqkey_viol_cntr:\t\t0x%x\n", pt.QKeyViolCntr)
	p("\t\t\tsm_sl:\t\t\t%d\n", pt.SMSL)
	p("\t\t\tpkey_tbl_len:\t\t%d\n", pt.PKeyTblLen)
	p("\t\t\tgid_tbl_len:\t\t%d\n", pt.GIDTblLen)
	p("\t\t\tsubnet_timeout:\t\t%d\n", pt.SubnetTimeout)
	p("\t\t\tinit_type_reply:\t%d\n", pt.InitTypeReply)
	p("\t\t\tactive_width:\t\t%sX (%d)\n", widthStr(pt.ActiveWidth), pt.ActiveWidth)
	p("\t\t\tactive_speed:\t\t%s (%d)\n", speedStr(pt.ActiveSpeed), pt.ActiveSpeed)
	if d.Transport == verbs.TransportIB {
		p("\t\t\tphys_state:\t\t%s (%d)\n", physStateStr(pt.PhysState), pt.PhysState)
	}
	for _, g := range pt.GIDs {
		suffix := ""
		if pt.LinkLayer == verbs.LinkLayerEthernet {
			suffix = ", " + gidTypeStr(g.Type)
		}
		switch g.Type {
		case verbs.GIDTypeIBRoCEv1:
			r := g.Raw
			p("\t\t\tGID[%3d]:\t\t%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x%s\n", g.Index,
				r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15], suffix)
		case verbs.GIDTypeRoCEv2:
			p("\t\t\tGID[%3d]:\t\t%s%s\n", g.Index, rdma.GID(g.Raw), suffix)
		}
	}
	return b
}

func gidTypeStr(t int) string {
	switch t {
	case verbs.GIDTypeIBRoCEv1:
		return "RoCE v1"
	case verbs.GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return "Invalid gid type"
}
