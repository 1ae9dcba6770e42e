// Package local holds the tools that read the local host's RDMA devices
// from sysfs or libibverbs, sending no MAD: ibstat, ibstatus, ibv_devices,
// ibv_devinfo and set_nodedesc.
package local
