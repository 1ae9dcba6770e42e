package ibsim

import (
	"fmt"
	"io/fs"
	"testing/fstest"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// SysFS returns the attach point as the sysfs tree libumad2sim.so writes
// for the C tools (dev_sysfs_create in umad2sim.c), byte for byte: device
// ibsim0 with one port, umad0 and issm0. Paths are relative to the sysfs
// mount point ("class/infiniband/ibsim0/node_type"), so pkg/rdma reads it
// as it reads /sys.
//
// The shim's quirks are kept: lid, sm_lid, sm_sl, lid_mask_count and
// cap_mask have no trailing newline; node_type prints its number in hex;
// the GID's interface ID is the node GUID plus the port number; the rate is
// computed from the active width and speed as the shim computes it.
func (a *AttachInfo) SysFS() fs.FS {
	m := fstest.MapFS{}
	dir := func(p string) { m[p] = &fstest.MapFile{Mode: fs.ModeDir | 0o755} }
	file := func(p, format string, args ...any) {
		m[p] = &fstest.MapFile{Data: fmt.Appendf(nil, format, args...), Mode: 0o644}
	}
	ni, pi := &a.NodeInfo, &a.PortInfo

	for _, d := range []string{"class", "class/infiniband", "class/infiniband_mad"} {
		dir(d)
	}
	file("class/infiniband_mad/abi_version", "%d\n", umadABIVersion)

	dev := "class/infiniband/" + DeviceName
	dir(dev)
	file(dev+"/node_type", "%x: %s\n", uint8(ni.NodeType), nodeTypeName(ni.NodeType))
	file(dev+"/fw_ver", "%x\n", a.Vendor.FWVersion)
	file(dev+"/hw_rev", "%x\n", a.Vendor.HWVersion)
	file(dev+"/hca_type", "simulator\n")
	file(dev+"/node_guid", "%s\n", ni.NodeGUID.Colon())
	file(dev+"/sys_image_guid", "%s\n", ni.SystemImageGUID.Colon())

	port := fmt.Sprintf("%s/ports/%d", dev, pi.LocalPort)
	dir(dev + "/ports")
	dir(port)
	file(port+"/lid_mask_count", "%d", pi.LMC)
	file(port+"/sm_lid", "0x%x", uint16(pi.SMLID))
	file(port+"/sm_sl", "%d", pi.SMSL)
	file(port+"/lid", "0x%x", uint16(pi.LID))
	file(port+"/state", "%d: %s\n", pi.State, portStateName(pi.State))
	file(port+"/phys_state", "%d: %s\n", pi.PhysState, physStateName(pi.PhysState))
	file(port+"/rate", "%s\n", shimRate(pi))
	file(port+"/cap_mask", "0x%08x", pi.CapMask)
	dir(port + "/gids")
	gid := rdma.NewGID(pi.GIDPrefix, ni.NodeGUID+rdma.GUID(pi.LocalPort))
	file(port+"/gids/0", "%s\n", gid.Long())
	dir(port + "/pkeys")
	for i, pk := range a.PKeys {
		file(fmt.Sprintf("%s/pkeys/%d", port, i), "0x%04x\n", pk)
	}

	for _, name := range []string{"umad0", "issm0"} {
		d := "class/infiniband_mad/" + name
		dir(d)
		file(d+"/ibdev", "%s\n", DeviceName)
		file(d+"/port", "%d\n", pi.LocalPort)
	}
	return m
}

// umadABIVersion is IB_UMAD_ABI_VERSION, which the shim writes to
// class/infiniband_mad/abi_version.
const umadABIVersion = 5

func nodeTypeName(t mad.NodeType) string {
	switch t {
	case mad.NodeTypeCA:
		return "CA"
	case mad.NodeTypeSwitch:
		return "SWITCH"
	case mad.NodeTypeRouter:
		return "ROUTER"
	}
	return "<unknown>"
}

var portStateNames = [...]string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}

func portStateName(s uint8) string {
	if int(s) < len(portStateNames) {
		return portStateNames[s]
	}
	return "<unknown>"
}

var physStateNames = [...]string{
	1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining",
	5: "LinkUp", 6: "LinkErrorRecovery", 7: "Phy Test",
}

func physStateName(s uint8) string {
	if int(s) < len(physStateNames) && physStateNames[s] != "" {
		return physStateNames[s]
	}
	return "<unknown>"
}

// shimRate is the shim's rate text, quirks included: extended speeds count
// only when the capability bit says so, any extended speed but FDR is taken
// as 26 Gb/s a lane, and a speed code outside 1, 2, 4 is still multiplied
// in as 2.5 Gb/s times the code.
func shimRate(pi *PortInfo) string {
	var width uint32
	switch pi.LinkWidthActive {
	case 1:
		width = 1
	case 2:
		width = 4
	case 4:
		width = 8
	case 8:
		width = 12
	}
	var speed uint32
	if pi.CapMask&CapMaskExtSpeeds != 0 {
		speed = uint32(pi.LinkSpeedExtActive)
	}
	if speed == 0 {
		speed = uint32(pi.LinkSpeedActive)
		name := map[uint32]string{2: " DDR", 4: " QDR"}[speed]
		tenths := width * speed * 25
		half := ""
		if tenths%10 != 0 {
			half = ".5"
		}
		return fmt.Sprintf("%d%s Gb/sec (%dX%s)", tenths/10, half, width, name)
	}
	name := map[uint32]string{1: " FDR", 2: " EDR", 4: " HDR"}[speed]
	gbps := 26 * width
	if speed == 1 {
		gbps = 14 * width
	}
	return fmt.Sprintf("%d Gb/sec (%dX%s)", gbps, width, name)
}
