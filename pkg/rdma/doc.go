// Package rdma holds the InfiniBand identifier types (GUID, GID, LID), the
// local RDMA devices and ports read from sysfs, and the error types every
// other ibtool package wraps.
//
// Devices are read through an FS rooted at a sysfs mount point, so tests run
// on fixture trees under testdata/ and the simulator transport can present
// its attach point as a device without touching the real /sys.
package rdma
