package ibsim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/rdma"
)

// Device must be what pkg/rdma reads from SysFS for the same attach info,
// field for field, whatever the replies held.
func TestDeviceMatchesSysFS(t *testing.T) {
	hca, sw := capturedAttach(t, "Hca1"), capturedAttach(t, "Switch1")
	tests := []struct {
		name   string
		base   AttachInfo
		change func(a *AttachInfo)
	}{
		{"captured HCA", hca, func(*AttachInfo) {}},
		{"captured switch", sw, func(*AttachInfo) {}},
		{"router", hca, func(a *AttachInfo) { a.NodeInfo.NodeType = mad.NodeTypeRouter }},
		{"port 255, LMC 7", hca, func(a *AttachInfo) { a.PortInfo.LocalPort, a.PortInfo.LMC = 255, 7 }},
		{"port 0 of a switch", sw, func(a *AttachInfo) { a.PortInfo.LocalPort = 0 }},
		{"down, polling", hca, func(a *AttachInfo) { a.PortInfo.State, a.PortInfo.PhysState = PortStateDown, 2 }},
		{"unknown states", hca, func(a *AttachInfo) { a.PortInfo.State, a.PortInfo.PhysState = 15, 15 }},
		{"LIDs at their ends", hca, func(a *AttachInfo) {
			a.PortInfo.LID, a.PortInfo.SMLID, a.PortInfo.SMSL = 0xffff, 0xbfff, 15
		}},
		{"1X SDR", hca, func(a *AttachInfo) { a.PortInfo.LinkWidthActive, a.PortInfo.LinkSpeedActive = 1, 1 }},
		{"12X QDR", hca, func(a *AttachInfo) { a.PortInfo.LinkWidthActive, a.PortInfo.LinkSpeedActive = 8, 4 }},
		{"4X EDR", hca, func(a *AttachInfo) {
			a.PortInfo.CapMask |= CapMaskExtSpeeds
			a.PortInfo.LinkWidthActive, a.PortInfo.LinkSpeedExtActive = 2, 2
		}},
		{"odd width and speed codes", hca, func(a *AttachInfo) { a.PortInfo.LinkWidthActive, a.PortInfo.LinkSpeedActive = 16, 7 }},
		{"cap mask and GID prefix", hca, func(a *AttachInfo) {
			a.PortInfo.CapMask, a.PortInfo.GIDPrefix = 0xffffffff, 0xfe80000000001234
		}},
		{"GUIDs", hca, func(a *AttachInfo) {
			a.NodeInfo.NodeGUID, a.NodeInfo.SystemImageGUID = 0xffffffffffffffff, 0x0002c90300a1b2c4
		}},
		{"versions", hca, func(a *AttachInfo) { a.Vendor.FWVersion, a.Vendor.HWVersion = 0xffffffffffffffff, 0xabcdef }},
		{"P_Keys", hca, func(a *AttachInfo) {
			for i := range a.PKeys {
				a.PKeys[i] = uint16(0x8000 + i*0x101)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.base
			tt.change(&a)
			want, err := rdma.NewFS(a.SysFS(), "sim").Devices()
			if err != nil {
				t.Fatalf("reading SysFS: %v", err)
			}
			got, ok := a.Device()
			if !ok {
				t.Fatal("Device: not ok")
			}
			if diff := cmp.Diff(want, []*rdma.Device{got}); diff != "" {
				t.Errorf("unexpected device (-SysFS +Device):\n%s", diff)
			}
		})
	}
}

// pkg/rdma lists no device of another node type than CA, switch and
// router (and reads 0xa and above as strtoul takes their hex digits), so
// Device leaves those to SysFS.
func TestDeviceLeavesOtherNodeTypes(t *testing.T) {
	a := capturedAttach(t, "Hca1")
	for _, nt := range []mad.NodeType{0, 4, 9, 0xa, 0x10, 0xff} {
		a.NodeInfo.NodeType = nt
		if _, ok := a.Device(); ok {
			t.Errorf("node type %#x: Device ok, want it left to SysFS", uint8(nt))
		}
	}
}
