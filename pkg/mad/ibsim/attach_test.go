package ibsim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ibtool/ibtool/pkg/mad"
)

func TestAttachCaptured(t *testing.T) {
	ignoreRaw := cmpopts.IgnoreFields(NodeInfo{}, "Raw")
	ignoreRawPI := cmpopts.IgnoreFields(PortInfo{}, "Raw")
	tests := []struct {
		host   string
		wantNI NodeInfo
		wantPI PortInfo
	}{
		{
			host: "Hca1",
			wantNI: NodeInfo{NodeType: mad.NodeTypeCA, NumPorts: 2, SystemImageGUID: 0x100000,
				NodeGUID: 0x100000, PortGUID: 0x100000, LocalPort: 1},
			wantPI: PortInfo{CapMask: 0x0050c048, LocalPort: 1, LinkWidthActive: 2,
				State: PortStateInit, PhysState: 5, LinkSpeedActive: 1},
		},
		{
			host: "Switch1",
			wantNI: NodeInfo{NodeType: mad.NodeTypeSwitch, NumPorts: 8, SystemImageGUID: 0x200000,
				NodeGUID: 0x200000, PortGUID: 0x200000, LocalPort: 0},
			wantPI: PortInfo{CapMask: 0x0000c048, LocalPort: 0, LinkWidthActive: 2,
				State: PortStateActive, PhysState: 5, LinkSpeedActive: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			a := capturedAttach(t, tt.host)
			if diff := cmp.Diff(tt.wantNI, a.NodeInfo, ignoreRaw); diff != "" {
				t.Errorf("unexpected NodeInfo (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPI, a.PortInfo, ignoreRawPI); diff != "" {
				t.Errorf("unexpected PortInfo (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(Vendor{HWVersion: 0xa1, FWVersion: 1}, a.Vendor); diff != "" {
				t.Errorf("unexpected vendor (-want +got):\n%s", diff)
			}
			if a.PKeys != [NumPKeys]uint16{0xffff} {
				t.Errorf("P_Keys %#04x, want 0xffff and zeros", a.PKeys)
			}
		})
	}
}

// Fields the captures leave at zero, set by hand at their IBA offsets.
func TestPortInfoFieldOffsets(t *testing.T) {
	b := make([]byte, 64)
	copy(b[8:], []byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0}) // GidPrefix
	b[16], b[17] = 0x12, 0x34                         // LID
	b[18], b[19] = 0x00, 0x01                         // MasterSMLID
	b[34] = 0xc0 | 0x05                               // M_KeyProtectBits, LMC
	b[36] = 0x50 | 0x0a                               // NeighborMTU, MasterSMSL
	b[62] = 0x20 | 0x07                               // LinkSpeedExtActive, ..Supported
	var p PortInfo
	if err := p.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	got := [6]uint64{p.GIDPrefix, uint64(p.LID), uint64(p.SMLID), uint64(p.LMC), uint64(p.SMSL), uint64(p.LinkSpeedExtActive)}
	want := [6]uint64{0xfe80000000000000, 0x1234, 1, 5, 0xa, 2}
	if got != want {
		t.Errorf("decoded %#x, want %#x", got, want)
	}
}

func TestAttachShort(t *testing.T) {
	var n NodeInfo
	if err := n.UnmarshalBinary(make([]byte, 63)); err == nil {
		t.Error("NodeInfo from 63 bytes succeeded")
	}
	var p PortInfo
	if err := p.UnmarshalBinary(make([]byte, 63)); err == nil {
		t.Error("PortInfo from 63 bytes succeeded")
	}
}

func TestMatchedByDescription(t *testing.T) {
	tests := []struct {
		requested, nodeID string
		want              bool
	}{
		{"", "Switch1", false},
		{"Hca1", "Hca1", false},
		{"Hca1 HCA-1", "Hca1", true},
	}
	for _, tt := range tests {
		a := AttachInfo{Requested: tt.requested, NodeID: tt.nodeID}
		if got := a.MatchedByDescription(); got != tt.want {
			t.Errorf("MatchedByDescription(%q, %q) = %v, want %v", tt.requested, tt.nodeID, got, tt.want)
		}
	}
}

func FuzzAttachInfo(f *testing.F) {
	f.Add(unhex(f, capturedHca1NodeInfo), unhex(f, capturedHca1PortInfo))
	f.Add(unhex(f, capturedSwitch1NodeInfo), unhex(f, capturedSwitch1PortInfo))
	f.Fuzz(func(t *testing.T, ni, pi []byte) {
		var a AttachInfo
		errN := a.NodeInfo.UnmarshalBinary(ni)
		errP := a.PortInfo.UnmarshalBinary(pi)
		if (errN == nil) != (len(ni) >= 64) || (errP == nil) != (len(pi) >= 64) {
			t.Fatalf("errors %v, %v for %d and %d bytes", errN, errP, len(ni), len(pi))
		}
		if errN == nil && errP == nil {
			if _, err := readTree(a.SysFS()); err != nil {
				t.Fatal(err)
			}
		}
	})
}
