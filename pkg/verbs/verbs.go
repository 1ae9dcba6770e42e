//go:build cgo && !noverbs

package verbs

/*
#cgo LDFLAGS: -libverbs
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

// ibt_dev is what Devices needs of one device, flat for Go.
struct ibt_dev {
	char name[IBV_SYSFS_NAME_MAX];
	char path[IBV_SYSFS_PATH_MAX];
	int transport;
	char fw_ver[64];
	uint64_t node_guid, sys_image_guid;
	uint32_t vendor_id, vendor_part_id, hw_ver;
	int phys_port_cnt;
};

struct ibt_port {
	int state, max_mtu, active_mtu;
	uint16_t sm_lid, lid;
	uint8_t lmc, link_layer;
};

static int ibt_count(struct ibv_device **l) {
	int n = 0;
	while (l && l[n])
		n++;
	return n;
}

static struct ibv_device *ibt_at(struct ibv_device **l, int i) { return l[i]; }

// ibt_query opens dev, queries it and up to nports of its ports; it returns
// 0, or the step that failed (1 open, 2 query device, 3 query port) with
// errno set.
static int ibt_query(struct ibv_device *dev, struct ibt_dev *d, struct ibt_port *ports, int nports) {
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_device_attr attr;
	int i, rc = 0;

	strncpy(d->name, ibv_get_device_name(dev), sizeof d->name - 1);
	strncpy(d->path, dev->ibdev_path, sizeof d->path - 1);
	d->transport = dev->transport_type;
	if (!ctx)
		return 1;
	if (ibv_query_device(ctx, &attr)) {
		rc = 2;
		goto out;
	}
	strncpy(d->fw_ver, attr.fw_ver, sizeof d->fw_ver - 1);
	d->node_guid = attr.node_guid;
	d->sys_image_guid = attr.sys_image_guid;
	d->vendor_id = attr.vendor_id;
	d->vendor_part_id = attr.vendor_part_id;
	d->hw_ver = attr.hw_ver;
	d->phys_port_cnt = attr.phys_port_cnt;
	for (i = 0; i < attr.phys_port_cnt && i < nports; i++) {
		struct ibv_port_attr pa;
		if (ibv_query_port(ctx, i + 1, &pa)) {
			rc = 3;
			goto out;
		}
		ports[i].state = pa.state;
		ports[i].max_mtu = pa.max_mtu;
		ports[i].active_mtu = pa.active_mtu;
		ports[i].sm_lid = pa.sm_lid;
		ports[i].lid = pa.lid;
		ports[i].lmc = pa.lmc;
		ports[i].link_layer = pa.link_layer;
	}
out:
	ibv_close_device(ctx);
	return rc;
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"syscall"
	"unsafe"
)

// maxPorts bounds the ports read of one device (phys_port_cnt is a u8).
const maxPorts = 255

// list calls fn with libibverbs' device list, freed afterwards.
func list(fn func(l **C.struct_ibv_device, n int) error) error {
	var n C.int
	l, err := C.ibv_get_device_list(&n)
	if l == nil {
		if err == nil {
			err = syscall.ENOSYS
		}
		return fmt.Errorf("failed to get IB devices list: %w", err)
	}
	defer C.ibv_free_device_list(l)
	return fn(l, int(C.ibt_count(l)))
}

// DeviceNames returns the devices libibverbs lists, in its order.
func DeviceNames() ([]string, error) {
	var names []string
	err := list(func(l **C.struct_ibv_device, n int) error {
		for i := range n {
			names = append(names, C.GoString(C.ibv_get_device_name(C.ibt_at(l, C.int(i)))))
		}
		return nil
	})
	return names, err
}

// Devices opens every device libibverbs lists and reads its attributes
// and its ports'.
func Devices() ([]Device, error) {
	var devs []Device
	err := list(func(l **C.struct_ibv_device, n int) error {
		ports := (*[maxPorts]C.struct_ibt_port)(C.calloc(maxPorts, C.size_t(unsafe.Sizeof(C.struct_ibt_port{}))))
		if ports == nil {
			return syscall.ENOMEM
		}
		defer C.free(unsafe.Pointer(ports))
		for i := range n {
			var d C.struct_ibt_dev
			rc, errno := C.ibt_query(C.ibt_at(l, C.int(i)), &d, &ports[0], maxPorts)
			dev := Device{Name: C.GoString(&d.name[0]), IBDevPath: C.GoString(&d.path[0]), Transport: int(d.transport)}
			switch rc {
			case 1:
				return fmt.Errorf("%s: failed to open device: %w", dev.Name, errno)
			case 2:
				return fmt.Errorf("%s: failed to query device props: %w", dev.Name, errno)
			case 3:
				return fmt.Errorf("%s: failed to query port props: %w", dev.Name, errno)
			}
			dev.FWVer = C.GoString(&d.fw_ver[0])
			dev.NodeGUID = beToHost(uint64(d.node_guid))
			dev.SysImageGUID = beToHost(uint64(d.sys_image_guid))
			dev.VendorID = uint32(d.vendor_id)
			dev.VendorPartID = uint32(d.vendor_part_id)
			dev.HWVer = uint32(d.hw_ver)
			dev.PhysPortCnt = int(d.phys_port_cnt)
			for p := 0; p < dev.PhysPortCnt && p < maxPorts; p++ {
				cp := ports[p]
				dev.Ports = append(dev.Ports, Port{Num: p + 1, State: int(cp.state), MaxMTU: int(cp.max_mtu), ActiveMTU: int(cp.active_mtu),
					SMLID: uint16(cp.sm_lid), LID: uint16(cp.lid), LMC: uint8(cp.lmc), LinkLayer: int(cp.link_layer)})
			}
			devs = append(devs, dev)
		}
		return nil
	})
	return devs, err
}

// beToHost turns a GUID libibverbs keeps in network order (__be64) into a
// number.
func beToHost(v uint64) uint64 {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}
