//go:build cgo && !noverbs

package verbs

// #cgo LDFLAGS: -ldl
// #include "ibt_verbs.h"
import "C"

import (
	"encoding/binary"
	"fmt"
	"sync"
	"syscall"
	"unsafe"
)

// loadLib loads libibverbs on first use (see ibt_dl.h); its error says
// why it could not.
var loadLib = sync.OnceValue(func() error {
	if msg := C.ibt_load(); msg != nil {
		return fmt.Errorf("%w: %s (install libibverbs1 and the providers, ibverbs-providers)", ErrNoLibibverbs, C.GoString(msg))
	}
	return nil
})

// list calls fn with libibverbs' device list, freed afterwards.
func list(fn func(l **C.struct_ibv_device, n int) error) error {
	if err := loadLib(); err != nil {
		return err
	}
	var n C.int
	l, err := C.ibtv_get_device_list(&n)
	if l == nil {
		if err == nil {
			err = syscall.ENOSYS
		}
		return fmt.Errorf("failed to get IB devices list: %w", err)
	}
	defer C.ibtv_free_device_list(l)
	return fn(l, int(C.ibt_count(l)))
}

// DeviceNames returns the devices libibverbs lists, in its order.
func DeviceNames() ([]string, error) {
	var names []string
	err := list(func(l **C.struct_ibv_device, n int) error {
		for i := range n {
			names = append(names, C.GoString(C.ibtv_get_device_name(C.ibt_at(l, C.int(i)))))
		}
		return nil
	})
	return names, err
}

// Devices opens every device libibverbs lists and reads its attributes,
// its ports' and their GIDs.
func Devices() ([]Device, error) {
	var devs []Device
	err := list(func(l **C.struct_ibv_device, n int) error {
		for i := range n {
			d, err := query(C.ibt_at(l, C.int(i)))
			if err != nil {
				return err
			}
			devs = append(devs, d)
		}
		return nil
	})
	return devs, err
}

// query opens one device and reads what ibv_devinfo prints.
func query(dev *C.struct_ibv_device) (Device, error) {
	d := Device{Name: C.GoString(C.ibtv_get_device_name(dev)), IBDevPath: C.GoString(C.ibt_path(dev)), Transport: Transport(C.ibt_transport(dev))}
	ctx, err := C.ibtv_open_device(dev)
	if ctx == nil {
		return d, fmt.Errorf("%s: failed to open device: %w", d.Name, err)
	}
	defer C.ibtv_close_device(ctx)
	var ax C.struct_ibv_device_attr_ex
	if rc, err := C.ibt_query_device_ex(ctx, &ax); rc != 0 {
		return d, fmt.Errorf("%s: failed to query device props: %w", d.Name, errnoOr(err, rc))
	}
	da := deviceAttr(&ax.orig_attr)
	d.FWVer, d.NodeGUID, d.SysImageGUID = da.FWVer, da.NodeGUID, da.SysImageGUID
	d.VendorID, d.VendorPartID, d.HWVer = da.VendorID, da.VendorPartID, da.HWVer
	d.PhysPortCnt = da.Attr.PhysPortCnt
	d.Attr = attrFromC(&ax, ctx)
	for p := 1; p <= d.PhysPortCnt; p++ {
		var pa C.struct_ibv_port_attr
		if rc, err := C.ibt_query_port_attr(ctx, C.int(p), &pa); rc != 0 {
			return d, fmt.Errorf("%s: failed to query port %d props: %w", d.Name, p, errnoOr(err, rc))
		}
		port := portFromAttr(p, &pa)
		for idx := 0; idx < port.GIDTblLen; idx++ {
			var gid C.union_ibv_gid
			var typ C.int
			if rc, err := C.ibt_query_gid(ctx, C.int(p), C.int(idx), &gid, &typ); rc != 0 {
				return d, fmt.Errorf("%s: failed to query gid to port %d, index %d: %w", d.Name, p, idx, errnoOr(err, rc))
			}
			g := GID{Index: idx, Type: int(typ)}
			copy(g.Raw[:], C.GoBytes(unsafe.Pointer(&gid), 16))
			if g.Raw[8]|g.Raw[9]|g.Raw[10]|g.Raw[11]|g.Raw[12]|g.Raw[13]|g.Raw[14]|g.Raw[15] != 0 {
				port.GIDs = append(port.GIDs, g)
			}
		}
		d.Ports = append(d.Ports, port)
	}
	return d, nil
}

// deviceAttr is struct ibv_device_attr in Go: the identity, and in Attr
// the fields of struct ibv_device_attr.
func deviceAttr(a *C.struct_ibv_device_attr) DeviceAttr {
	return DeviceAttr{
		FWVer: C.GoString(&a.fw_ver[0]), NodeGUID: beToHost(uint64(a.node_guid)), SysImageGUID: beToHost(uint64(a.sys_image_guid)),
		VendorID: uint32(a.vendor_id), VendorPartID: uint32(a.vendor_part_id), HWVer: uint32(a.hw_ver),
		Attr: Attr{
			MaxMRSize: uint64(a.max_mr_size), PageSizeCap: uint64(a.page_size_cap),
			MaxQP: int(a.max_qp), MaxQPWR: int(a.max_qp_wr), DeviceCapFlags: uint32(a.device_cap_flags),
			MaxSGE: int(a.max_sge), MaxSGERd: int(a.max_sge_rd), MaxCQ: int(a.max_cq), MaxCQE: int(a.max_cqe),
			MaxMR: int(a.max_mr), MaxPD: int(a.max_pd), MaxQPRdAtom: int(a.max_qp_rd_atom), MaxEERdAtom: int(a.max_ee_rd_atom),
			MaxResRdAtom: int(a.max_res_rd_atom), MaxQPInitRdAtom: int(a.max_qp_init_rd_atom), MaxEEInitRdAtom: int(a.max_ee_init_rd_atom),
			AtomicCap: int(a.atomic_cap), MaxEE: int(a.max_ee), MaxRDD: int(a.max_rdd), MaxMW: int(a.max_mw),
			MaxRawIPv6QP: int(a.max_raw_ipv6_qp), MaxRawEthQP: int(a.max_raw_ethy_qp), MaxMcastGrp: int(a.max_mcast_grp),
			MaxMcastQPAttach: int(a.max_mcast_qp_attach), MaxTotalMcastQPAttach: int(a.max_total_mcast_qp_attach),
			MaxAH: int(a.max_ah), MaxFMR: int(a.max_fmr), MaxMapPerFMR: int(a.max_map_per_fmr),
			MaxSRQ: int(a.max_srq), MaxSRQWR: int(a.max_srq_wr), MaxSRQSGE: int(a.max_srq_sge),
			MaxPKeys: int(a.max_pkeys), LocalCAAckDelay: int(a.local_ca_ack_delay), PhysPortCnt: int(a.phys_port_cnt),
		},
	}
}

// attrFromC is the part of ax that Attr holds, with ctx's completion
// vectors.
func attrFromC(ax *C.struct_ibv_device_attr_ex, ctx *C.struct_ibv_context) Attr {
	a := deviceAttr(&ax.orig_attr).Attr
	a.ODPGeneralCaps = uint64(ax.odp_caps.general_caps)
	a.ODPRC, a.ODPUC = uint32(ax.odp_caps.per_transport_caps.rc_odp_caps), uint32(ax.odp_caps.per_transport_caps.uc_odp_caps)
	a.ODPUD, a.ODPXRC = uint32(ax.odp_caps.per_transport_caps.ud_odp_caps), uint32(ax.xrc_odp_caps)
	a.CompletionTimestampMask, a.HCACoreClock = uint64(ax.completion_timestamp_mask), uint64(ax.hca_core_clock)
	a.RawPacketCaps, a.DeviceCapFlagsEx = uint32(ax.raw_packet_caps), uint64(ax.device_cap_flags_ex)
	a.MaxTSO, a.TSOQPTs = uint32(ax.tso_caps.max_tso), uint32(ax.tso_caps.supported_qpts)
	a.RSSQPTs, a.MaxRWQIndirectionTables = uint32(ax.rss_caps.supported_qpts), uint32(ax.rss_caps.max_rwq_indirection_tables)
	a.MaxRWQIndirectionTableSize = uint32(ax.rss_caps.max_rwq_indirection_table_size)
	a.RXHashFunction, a.RXHashFieldsMask = uint32(ax.rss_caps.rx_hash_function), uint64(ax.rss_caps.rx_hash_fields_mask)
	a.MaxWQTypeRQ = uint32(ax.max_wq_type_rq)
	a.QPRateLimitMin, a.QPRateLimitMax = uint32(ax.packet_pacing_caps.qp_rate_limit_min), uint32(ax.packet_pacing_caps.qp_rate_limit_max)
	a.PacingQPTs = uint32(ax.packet_pacing_caps.supported_qpts)
	a.TMMaxRndvHdrSize, a.TMMaxNumTags = uint32(ax.tm_caps.max_rndv_hdr_size), uint32(ax.tm_caps.max_num_tags)
	a.TMFlags, a.TMMaxOps, a.TMMaxSGE = uint32(ax.tm_caps.flags), uint32(ax.tm_caps.max_ops), uint32(ax.tm_caps.max_sge)
	a.MaxCQCount, a.MaxCQPeriod = uint16(ax.cq_mod_caps.max_cq_count), uint16(ax.cq_mod_caps.max_cq_period)
	a.MaxDMSize = uint64(ax.max_dm_size)
	a.NumCompVectors = int(C.ibt_comp_vectors(ctx))
	a.PhysPortCntEx = uint32(ax.phys_port_cnt_ex)
	return a
}

// portFromAttr is struct ibv_port_attr as a Port (without its GIDs).
func portFromAttr(p int, pa *C.struct_ibv_port_attr) Port {
	return Port{Num: p, State: PortState(pa.state), MaxMTU: MTU(pa.max_mtu), ActiveMTU: MTU(pa.active_mtu),
		SMLID: uint16(pa.sm_lid), LID: uint16(pa.lid), LMC: uint8(pa.lmc), LinkLayer: LinkLayer(pa.link_layer),
		MaxMsgSz: uint32(pa.max_msg_sz), PortCapFlags: uint32(pa.port_cap_flags), PortCapFlags2: uint16(pa.port_cap_flags2),
		MaxVLNum: uint8(pa.max_vl_num), BadPKeyCntr: uint32(pa.bad_pkey_cntr), QKeyViolCntr: uint32(pa.qkey_viol_cntr),
		SMSL: uint8(pa.sm_sl), PKeyTblLen: int(pa.pkey_tbl_len), GIDTblLen: int(pa.gid_tbl_len),
		SubnetTimeout: uint8(pa.subnet_timeout), InitTypeReply: uint8(pa.init_type_reply),
		ActiveWidth: uint8(pa.active_width), ActiveSpeed: uint8(pa.active_speed), PhysState: uint8(pa.phys_state)}
}

// errnoOr is err, or the return code as an errno when errno was not set.
func errnoOr(err error, rc C.int) error {
	if err != nil {
		return err
	}
	return syscall.Errno(rc)
}

// beToHost turns a GUID libibverbs keeps in network order (__be64) into a
// number.
func beToHost(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}
