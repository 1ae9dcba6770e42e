//go:build cgo && !noverbs

package verbs

// The device's queries: ports, GIDs, P_Keys, attributes and its
// asynchronous events.

// #include <stdlib.h>
// #include "ibt_verbs.h"
import "C"

import (
	"encoding/binary"
	"unsafe"
)

func (d *cDriver) queryPort(ctx handle, port int) (Port, error) {
	var pa C.struct_ibv_port_attr
	if rc, err := C.ibt_query_port_attr(ctx.(*C.struct_ibv_context), C.int(port), &pa); rc != 0 {
		return Port{}, rcErr(rc, err)
	}
	return portFromAttr(port, &pa), nil
}

func (d *cDriver) queryGID(ctx handle, port, index int) ([16]byte, error) {
	var gid C.union_ibv_gid
	var g [16]byte
	if rc, err := C.ibtv_query_gid(ctx.(*C.struct_ibv_context), C.uint8_t(port), C.int(index), &gid); rc != 0 {
		return g, rcErr(rc, err)
	}
	copy(g[:], C.GoBytes(unsafe.Pointer(&gid), 16))
	return g, nil
}

// gidEntry is a struct ibv_gid_entry in Go.
func gidEntry(e *C.struct_ibv_gid_entry) GIDEntry {
	g := GIDEntry{Index: int(e.gid_index), Port: int(e.port_num), Type: GIDEntryType(e.gid_type), NetdevIndex: int(e.ndev_ifindex)}
	copy(g.GID[:], C.GoBytes(unsafe.Pointer(&e.gid), 16))
	return g
}

func (d *cDriver) queryGIDEx(ctx handle, port, index int) (GIDEntry, error) {
	var e C.struct_ibv_gid_entry
	if rc, err := C.ibtv_query_gid_ex(ctx.(*C.struct_ibv_context), C.uint32_t(port), C.uint32_t(index), &e, 0); rc != 0 {
		return GIDEntry{}, rcErr(rc, err)
	}
	return gidEntry(&e), nil
}

func (d *cDriver) queryGIDTable(ctx handle, size int) ([]GIDEntry, error) {
	// C memory for at least one entry, so that a table of 0 reaches the
	// library's own check.
	es := (*C.struct_ibv_gid_entry)(C.calloc(C.size_t(max(size, 1)), C.sizeof_struct_ibv_gid_entry))
	defer C.free(unsafe.Pointer(es))
	n, err := C.ibtv_query_gid_table(ctx.(*C.struct_ibv_context), es, C.size_t(size))
	if n < 0 {
		return nil, rcErr(C.int(n), err)
	}
	out := make([]GIDEntry, n)
	for i, e := range unsafe.Slice(es, int(n)) {
		out[i] = gidEntry(&e)
	}
	return out, nil
}

func (d *cDriver) queryPKey(ctx handle, port, index int) (uint16, error) {
	var pk C.uint16_t
	if rc, err := C.ibtv_query_pkey(ctx.(*C.struct_ibv_context), C.uint8_t(port), C.int(index), &pk); rc != 0 {
		return 0, rcErr(rc, err)
	}
	// The table holds P_Keys in network order (__be16).
	return binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&pk))[:]), nil
}

func (d *cDriver) queryDevice(ctx handle) (Attr, error) {
	c := ctx.(*C.struct_ibv_context)
	var ax C.struct_ibv_device_attr_ex
	if rc, err := C.ibt_query_device_ex(c, &ax); rc != 0 {
		return Attr{}, errnoOr(err, rc)
	}
	return attrFromC(&ax, c), nil
}

func (d *cDriver) queryDeviceLegacy(ctx handle) (DeviceAttr, error) {
	var a C.struct_ibv_device_attr
	if rc, err := C.ibtv_query_device(ctx.(*C.struct_ibv_context), &a); rc != 0 {
		return DeviceAttr{}, rcErr(rc, err)
	}
	return deviceAttr(&a), nil
}

func (d *cDriver) asyncFD(ctx handle) int { return int(C.ibt_async_fd(ctx.(*C.struct_ibv_context))) }

func (d *cDriver) waitAsync(ctx handle, ms int) (bool, error) {
	rc, err := C.ibt_wait_async(ctx.(*C.struct_ibv_context), C.int(ms))
	if rc < 0 {
		return false, err
	}
	return rc == 1, nil
}

func (d *cDriver) getAsyncEvent(ctx handle) (AsyncEvent, error) {
	var typ, port C.int
	if rc, err := C.ibt_get_async_event(ctx.(*C.struct_ibv_context), &typ, &port); rc != 0 {
		return AsyncEvent{}, rcErr(rc, err)
	}
	return AsyncEvent{Type: EventType(typ), Port: int(port)}, nil
}
