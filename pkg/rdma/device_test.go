package rdma

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fixtureFS opens the fixture tree testdata/name as if it were /sys.
func fixtureFS(name string) *FS { return NewFS(os.DirFS("testdata/"+name), "/sys") }

func mustGID(t *testing.T, s string) GID {
	t.Helper()
	g, err := ParseGID(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestDeviceNames(t *testing.T) {
	tests := []struct {
		fixture string
		want    []string
	}{
		{"mlx5", []string{"mlx5_0", "mlx5_1"}},
		{"rxe", []string{"rxe0"}},
		// iwarp0 is not an InfiniBand node type.
		{"edge", []string{"minimal0", "odd0", "sw0"}},
		// nonode0 has no node_type: left out, and said (below).
		{"broken", []string{"good0", "many0", "noports0"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := fixtureFS(tt.fixture).DeviceNames()
			var skipped *SkippedError
			switch {
			case tt.fixture == "broken":
				const want = "open /sys/class/infiniband/nonode0/node_type: no such file or directory"
				if !errors.As(err, &skipped) || len(skipped.Skipped) != 1 || err.Error() != want {
					t.Errorf("error %v, want a *SkippedError %q", err, want)
				}
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDevicesFixtures(t *testing.T) {
	zero := GIDEntry{}
	gidAt := func(i int, e GIDEntry) GIDEntry { e.Index = i; return e }
	tests := []struct {
		fixture string
		want    []*Device
	}{
		{"mlx5", []*Device{
			{
				Name: "mlx5_0", NodeType: NodeTypeCA, CAType: "MT4123", FWVersion: "20.31.1014", HWRevision: "0",
				NodeGUID: 0x0c42a10300a1b2c4, SysImageGUID: 0x0c42a10300a1b2c4,
				NumPorts: 2,
				Ports: []*Port{
					{
						Number: 1, State: PortStateActive, PhysState: PhysPortStateLinkUp,
						Rate: "200 Gb/sec (4X HDR)", RateGbps: 200, LID: 5, SMLID: 1, CapMask: 0xa659e848,
						LinkLayer: "InfiniBand", GIDPrefix: 0xfe80000000000000, GUID: 0x0c42a10300a1b2c4,
						GIDs: []GIDEntry{
							{Index: 0, GID: mustGID(t, "fe80::c42:a103:a1:b2c4"), Type: GIDTypeIBRoCEv1},
							gidAt(1, zero), gidAt(2, zero), gidAt(3, zero),
						},
						PKeys: []uint16{0xffff, 0x8001, 0, 0},
					},
					{
						Number: 2, State: PortStateDown, PhysState: PhysPortStatePolling,
						Rate: "10 Gb/sec (4X SDR)", RateGbps: 10, LID: 0xffff, SMLID: 0, CapMask: 0xa659e848,
						LinkLayer: "InfiniBand", GIDPrefix: 0xfe80000000000000, GUID: 0x0c42a10300a1b2c5,
						GIDs: []GIDEntry{
							{Index: 0, GID: mustGID(t, "fe80::c42:a103:a1:b2c5"), Type: GIDTypeIBRoCEv1},
							gidAt(1, zero), gidAt(2, zero), gidAt(3, zero),
						},
						PKeys: []uint16{0xffff, 0, 0, 0},
					},
				},
			},
			{
				Name: "mlx5_1", NodeType: NodeTypeCA, CAType: "MT4119", FWVersion: "16.35.2000", HWRevision: "0",
				NodeGUID: 0x0c42a10300654320, SysImageGUID: 0x0c42a10300654320,
				NumPorts: 1,
				Ports: []*Port{{
					Number: 1, State: PortStateActive, PhysState: PhysPortStateLinkUp,
					Rate: "25 Gb/sec (1X EDR)", RateGbps: 25, CapMask: 0x04010000,
					LinkLayer: "Ethernet", GIDPrefix: 0xfe80000000000000, GUID: 0x0e42a1fffe654321,
					GIDs: []GIDEntry{
						{Index: 0, GID: mustGID(t, "fe80::e42:a1ff:fe65:4321"), Type: GIDTypeIBRoCEv1, NetDev: "ens1f1np1"},
						{Index: 1, GID: mustGID(t, "fe80::e42:a1ff:fe65:4321"), Type: GIDTypeRoCEv2, NetDev: "ens1f1np1"},
						{Index: 2, GID: mustGID(t, "::ffff:192.168.10.5"), Type: GIDTypeIBRoCEv1, NetDev: "ens1f1np1"},
						{Index: 3, GID: mustGID(t, "::ffff:192.168.10.5"), Type: GIDTypeRoCEv2, NetDev: "ens1f1np1"},
						gidAt(4, zero), gidAt(5, zero), gidAt(6, zero), gidAt(7, zero),
					},
					PKeys: []uint16{0xffff},
				}},
			},
		}},
		{"rxe", []*Device{{
			Name: "rxe0", NodeType: NodeTypeCA,
			NodeGUID: 0x505400fffe123456, SysImageGUID: 0x505400fffe123456,
			NumPorts: 1,
			Ports: []*Port{{
				Number: 1, State: PortStateActive, PhysState: PhysPortStateLinkUp,
				Rate: "2.5 Gb/sec (1X SDR)", RateGbps: 2, CapMask: 0x00010000,
				LinkLayer: "Ethernet", GIDPrefix: 0xfe80000000000000, GUID: 0x505400fffe123456,
				GIDs: []GIDEntry{
					{Index: 0, GID: mustGID(t, "fe80::5054:ff:fe12:3456"), Type: GIDTypeRoCEv2, NetDev: "enp0s3"},
					{Index: 1, GID: mustGID(t, "::ffff:10.0.2.15"), Type: GIDTypeRoCEv2, NetDev: "enp0s3"},
					gidAt(2, zero), gidAt(3, zero),
				},
				PKeys: []uint16{0xffff},
			}},
		}}},
		{"edge", []*Device{
			{
				Name: "minimal0", NodeType: NodeTypeCA,
				NodeGUID: 0x0002c90200201234, SysImageGUID: 0x0002c90200201237,
				NumPorts: 1,
				Ports: []*Port{{
					Number: 1, State: PortStateInit, PhysState: PhysPortStatePortConfigurationTraining,
					Rate: "40 Gb/sec (4X FDR10)", RateGbps: 40, LID: 0x1a, LMC: 2, SMLID: 1, SMSL: 3, CapMask: 0x02510868,
					LinkLayer: "IB", GIDPrefix: 0xfe80000000000000, GUID: 0x0002c90200201235,
					GIDs:  []GIDEntry{{Index: 0, GID: mustGID(t, "fe80::2:c902:20:1235")}},
					PKeys: []uint16{0xffff},
				}},
			},
			{
				Name: "odd0", NodeType: NodeTypeRouter,
				CAType:     "Vendor hardware type longer than forty characters",
				FWVersion:  "1.2.3 (build 20240101 long)",
				HWRevision: "a1b2c3d4e5f6a7b8c9d0e1",
				NodeGUID:   0x0002c90300000001, SysImageGUID: 0x0002c90300000000,
				NumPorts: 3,
				Ports: []*Port{
					{
						Number: 1, State: PortStateActiveDefer, PhysState: PhysPortStatePhyTest,
						Rate: "14 Gb/sec (1X FDR)", RateGbps: 14, LID: 0x10, SMLID: 1,
						LinkLayer: "Unknown", GIDPrefix: 0xfe80000000000000, GUID: 0x0002c90300000002,
						GIDs:  []GIDEntry{{Index: 0, GID: mustGID(t, "fe80::2:c903:0:2")}},
						PKeys: []uint16{0xffff},
					},
					{
						Number: 3, State: PortStateNoChange, PhysState: 8,
						Rate: "5 Gb/sec (1X DDR)", RateGbps: 5, LID: 0x11, SMLID: 1, CapMask: 0xffffffff,
						LinkLayer: "InfiniBandWithAVeryLongLinkLayer", GIDPrefix: 0xfe80000000000000, GUID: 0x0002c90300000003,
						GIDs:  []GIDEntry{{Index: 0, GID: mustGID(t, "fe80::2:c903:0:3")}},
						PKeys: []uint16{0xffff},
					},
				},
			},
			{
				Name: "sw0", NodeType: NodeTypeSwitch, CAType: "simulator", FWVersion: "1", HWRevision: "a1",
				NodeGUID: 0x0008f10500010000, SysImageGUID: 0x0008f10500010000,
				NumPorts: 0,
				Ports: []*Port{{
					Number: 0, State: PortStateActive, PhysState: PhysPortStateLinkUp,
					Rate: "10 Gb/sec (4X SDR)", RateGbps: 10, LID: 3, SMLID: 1, CapMask: 0x42500848,
					LinkLayer: "InfiniBand", GIDPrefix: 0xfe80000000000000, GUID: 0x0008f10500010000,
					GIDs:  []GIDEntry{{Index: 0, GID: mustGID(t, "fe80::8:f105:1:0")}},
					PKeys: []uint16{0xffff},
				}},
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := fixtureFS(tt.fixture).Devices()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected devices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeviceByName(t *testing.T) {
	// Device reads any node type, also one DeviceNames leaves out.
	d, err := fixtureFS("edge").Device("sw0")
	if err != nil {
		t.Fatal(err)
	}
	if d.NodeType != NodeTypeSwitch || d.NumPorts != 0 || d.Port(0) == nil || d.Port(1) != nil {
		t.Errorf("sw0 = %+v", d)
	}
	// libibumad needs a P_Key table; iwarp0 has none, so it does not read.
	_, err = fixtureFS("edge").Device("iwarp0")
	if want := "readdir /sys/class/infiniband/iwarp0/ports/1/pkeys: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("iwarp0: error %v, want prefix %q", err, want)
	}
	// Ports beyond libibumad's ten read here; the tools enforce their limits.
	d, err = fixtureFS("broken").Device("many0")
	if err != nil {
		t.Fatal(err)
	}
	if d.NumPorts != 10 || len(d.Ports) != 3 {
		t.Errorf("many0: NumPorts %d, %d ports; want 10 and 3", d.NumPorts, len(d.Ports))
	}
}
