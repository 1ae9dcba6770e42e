package endport

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// devices is a DeviceSource over a fixed list.
type devices []*rdma.Device

func (d devices) Devices() ([]*rdma.Device, error) { return d, nil }

// failingSource is a DeviceSource that cannot list.
type failingSource struct{ err error }

func (f failingSource) Devices() ([]*rdma.Device, error) { return nil, f.err }

func port(n int, state rdma.PortState, phys rdma.PhysPortState, linkLayer string, guid rdma.GUID, gids ...rdma.GID) *rdma.Port {
	p := &rdma.Port{Number: n, State: state, PhysState: phys, LinkLayer: linkLayer, GUID: guid, GIDPrefix: linkLocalPrefix}
	for i, g := range gids {
		p.GIDs = append(p.GIDs, rdma.GIDEntry{Index: i, GID: g})
	}
	return p
}

func device(name string, t rdma.NodeType, ports ...*rdma.Port) *rdma.Device {
	return &rdma.Device{Name: name, NodeType: t, Ports: ports, NumPorts: len(ports)}
}

func TestResolve(t *testing.T) {
	const (
		down    = rdma.PortStateDown
		initial = rdma.PortStateInit
		active  = rdma.PortStateActive
		poll    = rdma.PhysPortStatePolling
		linkUp  = rdma.PhysPortStateLinkUp
		dis     = rdma.PhysPortStateDisabled
	)
	sitePrefix := uint64(0xfec0) << 48
	mlx50 := device("mlx5_0", rdma.NodeTypeCA,
		port(1, down, poll, "InfiniBand", 0x11, rdma.NewGID(linkLocalPrefix, 0x11)),
		port(2, active, linkUp, "InfiniBand", 0x12, rdma.NewGID(linkLocalPrefix, 0x12), rdma.NewGID(sitePrefix, 0x12)))
	roce := device("mlx5_1", rdma.NodeTypeCA, port(1, active, linkUp, "Ethernet", 0x21))
	sw := device("sw0", rdma.NodeTypeSwitch, port(0, down, poll, "IB", 0x30))
	disabled := device("dis0", rdma.NodeTypeCA, port(1, down, dis, "InfiniBand", 0x41))
	up := device("up0", rdma.NodeTypeCA,
		port(1, initial, linkUp, "InfiniBand", 0x51),
		port(2, down, poll, "InfiniBand", 0x52))
	mlx50.NodeGUID, sw.NodeGUID, up.NodeGUID = 0x100, 0x300, 0x500

	tests := []struct {
		name  string
		local Local
		devs  devices
		want  string // device/port, or the error
	}{
		{"default: first active", Local{}, devices{mlx50}, "mlx5_0/2"},
		{"default: active beats an earlier device", Local{}, devices{disabled, up, mlx50}, "mlx5_0/2"},
		{"default: link up", Local{}, devices{up}, "up0/1"},
		{"default: not disabled", Local{}, devices{device("p0", rdma.NodeTypeCA, port(1, down, dis, "IB", 1), port(2, down, poll, "IB", 2))}, "p0/2"},
		{"default: last resort ignores link layer", Local{}, devices{roce}, "mlx5_1/1"},
		{"default: switch port 0", Local{}, devices{sw, mlx50}, "sw0/0"},
		{"default: none usable", Local{}, devices{disabled}, `no usable local end port: dis0 has no usable port`},
		{"default: no devices", Local{}, devices{}, `no usable local end port: no RDMA devices`},
		{"device", Local{CA: "mlx5_0"}, devices{up, mlx50}, "mlx5_0/2"},
		{"device and port as given", Local{CA: "mlx5_0", Port: 1}, devices{mlx50}, "mlx5_0/1"},
		{"device and disabled port as given", Local{CA: "dis0", Port: 1}, devices{disabled}, "dis0/1"},
		{"device without the port", Local{CA: "mlx5_0", Port: 3}, devices{mlx50}, `local end port "mlx5_0/3": mlx5_0 has no port 3`},
		{"switch", Local{CA: "sw0"}, devices{sw}, "sw0/0"},
		{"switch port 1", Local{CA: "sw0", Port: 1}, devices{sw}, `local end port "sw0/1": sw0 has no port 1`},
		{"device disabled", Local{CA: "dis0"}, devices{disabled}, `local end port "dis0": dis0 has no usable port`},
		{"no such device", Local{CA: "nosuch"}, devices{mlx50, up}, `local end port "nosuch": no RDMA device "nosuch" (have mlx5_0, up0)`},
		{"port on any device: active wins", Local{Port: 2}, devices{up, mlx50}, "mlx5_0/2"},
		{"port on any device: usable", Local{Port: 1}, devices{roce, mlx50}, "mlx5_0/1"},
		{"port on any device: switch offers 0", Local{Port: 1}, devices{sw, mlx50}, "sw0/0"},
		{"port on any device: none", Local{Port: 1}, devices{roce, disabled}, `local end port "1": mlx5_1/1 is not an InfiniBand port (link layer Ethernet); dis0/1 is disabled`},
		{"port on any device: missing", Local{Port: 3}, devices{up}, `local end port "3": up0 has no port 3`},
		{"GUID", Local{Kind: ByGUID, GUID: 0x52}, devices{mlx50, up}, "up0/2"},
		{"GUID missing", Local{Kind: ByGUID, GUID: 0x99}, devices{mlx50}, `local end port "0x0000000000000099": no local port has GUID 0x0000000000000099`},
		{"GID in table", Local{Kind: ByGID, GID: rdma.NewGID(sitePrefix, 0x12)}, devices{up, mlx50}, "mlx5_0/2"},
		{"link-local GID by GUID", Local{Kind: ByGID, GID: rdma.NewGID(linkLocalPrefix, 0x51)}, devices{mlx50, up}, "up0/1"},
		{"node GUID", Local{Kind: ByNodeGUID, GUID: 0x500}, devices{mlx50, up}, "up0/1"},
		{"node GUID and port", Local{Kind: ByNodeGUID, GUID: 0x500, Port: 2}, devices{mlx50, up}, "up0/2"},
		{"node GUID without the port", Local{Kind: ByNodeGUID, GUID: 0x500, Port: 3}, devices{up}, `local end port "0x0000000000000500/3": up0 has no port 3`},
		{"node GUID of a switch", Local{Kind: ByNodeGUID, GUID: 0x300}, devices{mlx50, sw}, "sw0/0"},
		{"node GUID missing", Local{Kind: ByNodeGUID, GUID: 0x99}, devices{mlx50, up}, `local end port "0x0000000000000099/0": no RDMA device has node GUID 0x0000000000000099 (have mlx5_0 0x0000000000000100, up0 0x0000000000000500)`},
		{"node GUID, no devices", Local{Kind: ByNodeGUID, GUID: 0x99}, devices{}, `local end port "0x0000000000000099/0": no RDMA devices`},
		{"site GID not by GUID", Local{Kind: ByGID, GID: rdma.NewGID(sitePrefix, 0x51)}, devices{up}, `local end port "fec0::51": no local port has GID fec0::51`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, p, err := tt.local.Resolve(tt.devs)
			got := errText(err)
			if err == nil {
				got = d.Name + "/" + strconv.Itoa(p.Number)
			} else {
				var re *ResolveError
				if !errors.As(err, &re) {
					t.Errorf("error is %T, want *ResolveError", err)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected resolution (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveSourceError(t *testing.T) {
	_, _, err := Local{}.Resolve(failingSource{fs.ErrPermission})
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Resolve: %v, want it to wrap %v", err, fs.ErrPermission)
	}
	if diff := cmp.Diff("listing local RDMA devices: permission denied", errText(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
}

// TestResolveFS resolves against pkg/rdma's mlx5 sysfs fixture tree, so
// *rdma.FS stays a DeviceSource.
func TestResolveFS(t *testing.T) {
	src := rdma.NewFS(os.DirFS("../rdma/testdata/mlx5"), "/sys")
	tests := []struct{ spec, want string }{
		{"mlx5_0", "mlx5_0/1"},
		{"mlx5_0/2", "mlx5_0/2"},
		{"2", "mlx5_0/2"},
		{"0x0c42a10300a1b2c5", "mlx5_0/2"},
		{"0c42:a103:00a1:b2c5", "mlx5_0/2"},
		{"fe80::c42:a103:a1:b2c4", "mlx5_0/1"},
		{"mlx5_1", "mlx5_1/1"},
		{"0x0c42a10300a1b2c4/2", "mlx5_0/2"},
		{"0c42:a103:0065:4320/0", "mlx5_1/1"},
		{"mlx5_2", `local end port "mlx5_2": no RDMA device "mlx5_2" (have mlx5_0, mlx5_1)`},
	}
	for _, tt := range tests {
		l, err := ParseLocal(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := resolution(l, src)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: unexpected resolution (-want +got):\n%s", tt.spec, diff)
		}
	}
	d, p, err := Local{}.Resolve(src)
	if err != nil || d.Name != "mlx5_0" || p.Number != 1 {
		t.Errorf("default end port: %v, %v, %v; want mlx5_0/1", d, p, err)
	}
}

// TestResolveUnreadLinkLayer checks that a port picked for its link layer
// fails when that file did not read (libibumad would take it as IB), and
// that one named outright does not.
func TestResolveUnreadLinkLayer(t *testing.T) {
	unread := &rdma.SysError{Op: "read", Path: "/sys/class/infiniband/mlx5_0/ports/1/link_layer", Err: syscall.EIO}
	p1 := port(1, rdma.PortStateActive, rdma.PhysPortStateLinkUp, "IB", 0x11)
	p1.Unread = []error{unread}
	src := devices{device("mlx5_0", rdma.NodeTypeCA, p1, port(2, rdma.PortStateActive, rdma.PhysPortStateLinkUp, "IB", 0x12))}
	const want = "picking a local end port: read /sys/class/infiniband/mlx5_0/ports/1/link_layer: input/output error"
	tests := []struct{ spec, want string }{
		{"", want},
		{"mlx5_0", want},
		{"1", want},
		{"mlx5_0/1", "mlx5_0/1"},
		{"0x11", "mlx5_0/1"},
		{"mlx5_0/2", "mlx5_0/2"},
	}
	for _, tt := range tests {
		var l Local
		if err := l.UnmarshalText([]byte(tt.spec)); err != nil {
			t.Fatal(err)
		}
		got, err := resolution(l, src)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q: unexpected resolution (-want +got):\n%s", tt.spec, diff)
		}
		if err != nil && !errors.Is(err, syscall.EIO) {
			t.Errorf("%q: %v does not wrap the read error", tt.spec, err)
		}
	}
}

// resolution resolves l in src and says where it went, "mlx5_0/1", or
// the error's text.
func resolution(l Local, src DeviceSource) (string, error) {
	d, p, err := l.Resolve(src)
	if err != nil {
		return errText(err), err
	}
	return d.Name + "/" + strconv.Itoa(p.Number), nil
}
