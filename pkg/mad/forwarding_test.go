package mad

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinearForwardingTablePorts(t *testing.T) {
	var lft LinearForwardingTable
	lft.SetPort(0, 1)
	lft.SetPort(63, 255)
	lft.SetPort(64+5, 7) // wraps to entry 5
	got := []uint8{lft.Port(0), lft.Port(5), lft.Port(63), lft.Port(64)}
	if diff := cmp.Diff([]uint8{1, 7, 255, 1}, got); diff != "" {
		t.Errorf("unexpected ports (-want +got):\n%s", diff)
	}
	data, err := lft.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if data[0] != 1 || data[5] != 7 || data[63] != 255 {
		t.Errorf("encoding % x: want the port of LID i in byte i", data)
	}
}

func TestMulticastForwardingTablePortMasks(t *testing.T) {
	var mft MulticastForwardingTable
	mft.SetPortMask(0, 0x000e)
	mft.SetPortMask(31, 0x8001)
	data, err := mft.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Masks are big-endian, MLID i's at bytes 2i and 2i+1 (IBA 14.2.5.11).
	if diff := cmp.Diff([]byte{0x00, 0x0e}, data[0:2]); diff != "" {
		t.Errorf("MLID 0's mask bytes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]byte{0x80, 0x01}, data[62:64]); diff != "" {
		t.Errorf("MLID 31's mask bytes (-want +got):\n%s", diff)
	}
	var back MulticastForwardingTable
	if err := back.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	got := []uint16{back.PortMask(0), back.PortMask(1), back.PortMask(31), back.PortMask(32)}
	if diff := cmp.Diff([]uint16{0x000e, 0, 0x8001, 0x000e}, got); diff != "" {
		t.Errorf("unexpected masks (-want +got):\n%s", diff)
	}
}

func TestForwardingBlocks(t *testing.T) {
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"LFTBlock(63)", LFTBlock(63), 0},
		{"LFTBlock(64)", LFTBlock(64), 1},
		{"MFTBlock(0xc000)", MFTBlock(0xc000), 0},
		{"MFTBlock(0xc020)", MFTBlock(0xc020), 1},
		{"MFTBlock(0xfffe)", MFTBlock(0xfffe), 511},
		{"MFTPositions(8)", MFTPositions(8), 1},
		{"MFTPositions(15)", MFTPositions(15), 1},
		{"MFTPositions(16)", MFTPositions(16), 2},
		{"MFTPositions(36)", MFTPositions(36), 3},
		{"MFTModifier(3, 2)", MFTModifier(3, 2), uint32(0x20000003)},
		{"MFTModifier(511, 15)", MFTModifier(511, 15), uint32(0xf00001ff)},
		{"MFTRecord.AttrMod", (&MulticastForwardingTableRecord{BlockNum: 5, Position: 1}).AttrMod(), uint32(0x10000005)},
		{"LFTRecord.AttrMod", (&LinearForwardingTableRecord{BlockNum: 5}).AttrMod(), uint32(5)},
		{"MaskPorts", MaskPorts(nil, 0x8007, 1, 1, 20), []int{16, 17, 18}},
		{"MaskPorts from 1", MaskPorts(nil, 0x0007, 0, 1, 20), []int{1, 2}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s: unexpected value (-want +got):\n%s", tt.name, diff)
		}
	}
}
