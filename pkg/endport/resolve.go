package endport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// DeviceSource lists the local RDMA devices, in the order a default end
// port is searched (libibumad sorts device names by strcmp). *rdma.FS
// satisfies it; so can the simulator's view of its attach point.
type DeviceSource interface {
	Devices() ([]*rdma.Device, error)
}

// ResolveError reports that no local port matches a Local.
type ResolveError struct {
	Local  string // the Local as given, in its String form; "" for the default
	Reason string // why no port matches, e.g. "mlx5_0 has no port 3"
}

// Error names the end port as given and why nothing matched it.
func (e *ResolveError) Error() string {
	if e.Local == "" {
		return "no usable local end port: " + e.Reason
	}
	return fmt.Sprintf("local end port %q: %s", e.Local, e.Reason)
}

// linkLocalPrefix is the default subnet prefix, fe80::/64.
const linkLocalPrefix = 0xfe80 << 48

// Resolve finds the device and port l names among the devices src lists.
//
// A GUID matches the port with that port GUID; a GID matches the port whose
// GID table holds it, or, with the default prefix fe80::/64, the port whose
// GUID is its lower half (python-rdma's find_port_gid). A name picks a port
// the way libibumad's umad_open_port does (resolve_ca_name and
// resolve_ca_port in libibumad/umad.c):
//
//   - A device and a port number: that port, in whatever state.
//   - A device and port 0: for a switch its port 0 (the management port);
//     otherwise the first active InfiniBand port (link layer IB), else the
//     first one with its link up, else the first port not disabled.
//   - No device: the first device whose port is active, else the first
//     where it is usable. Port 0 picks as above; a port number must be an
//     InfiniBand port that is not disabled, except that a switch always
//     offers its port 0, whatever the number asked for.
func (l Local) Resolve(src DeviceSource) (*rdma.Device, *rdma.Port, error) {
	devs, err := src.Devices()
	if err != nil {
		return nil, nil, fmt.Errorf("listing local RDMA devices: %w", err)
	}
	return l.resolveIn(devs)
}

// resolveIn is Resolve among devs.
func (l Local) resolveIn(devs []*rdma.Device) (*rdma.Device, *rdma.Port, error) {
	var d *rdma.Device
	var p *rdma.Port
	var reason string
	switch {
	case l.Kind == ByGUID:
		if d, p = findPort(devs, func(p *rdma.Port) bool { return p.GUID == l.GUID }); p == nil {
			reason = "no local port has GUID " + l.GUID.String()
		}
	case l.Kind == ByGID:
		d, p, reason = l.resolveGID(devs)
	case l.Kind == ByNodeGUID:
		d, p, reason = l.resolveNodeGUID(devs)
	case len(devs) == 0:
		reason = "no RDMA devices"
	case l.CA != "":
		d, p, reason = l.resolveCA(devs)
	default:
		d, p, reason = l.resolveAnyCA(devs)
	}
	if p == nil {
		return nil, nil, &ResolveError{Local: l.String(), Reason: reason}
	}
	picked := l.Kind == ByName && (l.CA == "" || l.Port == 0) || l.Kind == ByNodeGUID && l.Port == 0
	if picked && d.NodeType != rdma.NodeTypeSwitch && len(p.Unread) > 0 {
		// The port was picked as an InfiniBand port by its link layer,
		// which did not read: libibumad's default "IB" may be wrong.
		return nil, nil, fmt.Errorf("picking a local end port: %w", p.Unread[0])
	}
	return d, p, nil
}

func (l Local) resolveGID(devs []*rdma.Device) (*rdma.Device, *rdma.Port, string) {
	if d, p := findPort(devs, func(p *rdma.Port) bool { return hasGID(p, l.GID) }); p != nil {
		return d, p, ""
	}
	if l.GID.Prefix() == linkLocalPrefix {
		if d, p := findPort(devs, func(p *rdma.Port) bool { return p.GUID == l.GID.GUID() }); p != nil {
			return d, p, ""
		}
	}
	return nil, nil, "no local port has GID " + l.GID.String()
}

func (l Local) resolveCA(devs []*rdma.Device) (*rdma.Device, *rdma.Port, string) {
	for _, d := range devs {
		if d.Name == l.CA {
			return l.portOf(d)
		}
	}
	return nil, nil, fmt.Sprintf("no RDMA device %q (have %s)", l.CA, deviceNames(devs))
}

// resolveNodeGUID picks the port of the device whose node GUID l names,
// as resolveCA does for a name (python-rdma's find_node_guid finds the
// device).
func (l Local) resolveNodeGUID(devs []*rdma.Device) (*rdma.Device, *rdma.Port, string) {
	for _, d := range devs {
		if d.NodeGUID == l.GUID {
			return l.portOf(d)
		}
	}
	have := make([]string, len(devs))
	for i, d := range devs {
		have[i] = d.Name + " " + d.NodeGUID.String()
	}
	if len(have) == 0 {
		return nil, nil, "no RDMA devices"
	}
	return nil, nil, "no RDMA device has node GUID " + l.GUID.String() + " (have " + strings.Join(have, ", ") + ")"
}

// portOf picks port l.Port of d, the device l names.
func (l Local) portOf(d *rdma.Device) (*rdma.Device, *rdma.Port, string) {
	if l.Port == 0 {
		p, _, reason := pickPort(d, 0)
		return d, p, reason
	}
	// libibumad opens an explicit device and port as given.
	if p := d.Port(int(l.Port)); p != nil {
		return d, p, ""
	}
	return nil, nil, d.Name + " has no port " + strconv.Itoa(int(l.Port))
}

func (l Local) resolveAnyCA(devs []*rdma.Device) (*rdma.Device, *rdma.Port, string) {
	var fd *rdma.Device
	var fp *rdma.Port
	var reasons []string
	for _, d := range devs {
		p, active, reason := pickPort(d, l.Port)
		switch {
		case p == nil:
			reasons = append(reasons, reason)
		case active:
			return d, p, ""
		case fp == nil:
			fd, fp = d, p
		}
	}
	if fp == nil {
		return nil, nil, strings.Join(reasons, "; ")
	}
	return fd, fp, ""
}

// pickPort picks port n of d (0: any) as libibumad's resolve_ca_port does.
// It returns the port and whether it is active, or nil and the reason.
func pickPort(d *rdma.Device, n uint8) (*rdma.Port, bool, string) {
	if d.NodeType == rdma.NodeTypeSwitch {
		if p := d.Port(0); p != nil {
			return p, true, ""
		}
		return nil, false, d.Name + " is a switch without port 0"
	}
	if n > 0 {
		p := d.Port(int(n))
		switch {
		case p == nil:
			return nil, false, d.Name + " has no port " + strconv.Itoa(int(n))
		case !isIB(p):
			return nil, false, d.Name + "/" + strconv.Itoa(int(n)) + " is not an InfiniBand port (link layer " + p.LinkLayer + ")"
		case p.State == rdma.PortStateActive:
			return p, true, ""
		case p.PhysState == rdma.PhysPortStateDisabled:
			return nil, false, d.Name + "/" + strconv.Itoa(int(n)) + " is disabled"
		}
		return p, false, ""
	}
	var up *rdma.Port
	for _, p := range d.Ports {
		if !isIB(p) {
			continue
		}
		if up == nil && p.PhysState == rdma.PhysPortStateLinkUp {
			up = p
		}
		if p.State == rdma.PortStateActive {
			return p, true, ""
		}
	}
	if up != nil {
		return up, false, ""
	}
	// libibumad's last resort skips the link-layer test.
	for _, p := range d.Ports {
		if p.PhysState != rdma.PhysPortStateDisabled {
			return p, false, ""
		}
	}
	return nil, false, d.Name + " has no usable port"
}

func isIB(p *rdma.Port) bool { return p.LinkLayer == "InfiniBand" || p.LinkLayer == "IB" }

func hasGID(p *rdma.Port, g rdma.GID) bool {
	for _, e := range p.GIDs {
		if e.GID == g {
			return true
		}
	}
	return false
}

// findPort returns the first port, in device and port order, that match
// accepts.
func findPort(devs []*rdma.Device, match func(*rdma.Port) bool) (*rdma.Device, *rdma.Port) {
	for _, d := range devs {
		for _, p := range d.Ports {
			if match(p) {
				return d, p
			}
		}
	}
	return nil, nil
}

func deviceNames(devs []*rdma.Device) string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}
