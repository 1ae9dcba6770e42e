package mad

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// generalInfoData returns GeneralInfo's data as a device of devID answers
// it: hardware revision 0xa0, firmware 1.2.3 (and 0x40506.7.8 in the
// extended layout), software 4.5.6 (9.10.11 in the extended layout).
func generalInfoData(devID uint16) []byte {
	ext := GeneralInfoExt{HWRevision: 0xa0, DeviceID: devID, FWMajor: 1, FWMinor: 2, FWSubMinor: 3,
		PSID: PSIDString{'M', 'T', '_', '1'}, ExtFWMajor: 0x40506, ExtFWMinor: 7, ExtFWSubMinor: 8,
		SWMajor: 9, SWMinor: 10, SWSubMinor: 11}
	data, _ := ext.MarshalBinary()
	// Where the extended layout has its firmware version, GeneralInfo's
	// has the software version.
	data[77], data[78], data[79] = 4, 5, 6
	return data
}

func TestGeneralInfoVersions(t *testing.T) {
	tests := []struct {
		devID  uint16
		wantFW [3]uint32
		wantSW [3]uint8
	}{
		{IS3DeviceID, [3]uint32{1, 2, 3}, [3]uint8{4, 5, 6}},
		{0x1003, [3]uint32{0x40506, 7, 8}, [3]uint8{9, 10, 11}}, // ConnectX: extended
		{0x101b, [3]uint32{0x40506, 7, 8}, [3]uint8{9, 10, 11}}, // the range's last
		{0x101c, [3]uint32{1, 2, 3}, [3]uint8{4, 5, 6}},
	}
	for _, tt := range tests {
		data := generalInfoData(tt.devID)
		var gi GeneralInfo
		if err := gi.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		fw, sw, err := gi.Versions(data)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{tt.wantFW, tt.wantSW}, []any{fw, sw}); diff != "" {
			t.Errorf("device %#x: versions (-want +got):\n%s", tt.devID, diff)
		}
		if got := gi.PSID.String(); got != "MT_1" {
			t.Errorf("PSID %q", got)
		}
	}
	var gi GeneralInfo
	gi.DeviceID = 0x1003
	if _, _, err := gi.Versions(make([]byte, 108)); err == nil {
		t.Error("extended layout from 108 bytes: no error")
	}
}

func TestConfigSpaceAccess(t *testing.T) {
	var cs ConfigSpaceAccess
	cs.Records[0] = ConfigSpaceRecord{Address: 0x10213c, Data: 5, Mask: 0xffffffff}
	cs.Records[17].Address = 0x1
	data, err := cs.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 8+18*12 || data[8+2] != 0x21 || data[8+7] != 5 || data[8+17*12+3] != 1 {
		t.Errorf("encoding %x", data)
	}
	if MaxConfigSpaceRecords != 18 {
		t.Errorf("MaxConfigSpaceRecords %d", MaxConfigSpaceRecords)
	}
	if got := ConfigSpaceAccessMod(16); got != 0x900000 {
		t.Errorf("ConfigSpaceAccessMod(16) = %#x, want 0x900000", got)
	}
}
