package mad

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// put returns a record of size bytes, zero but for the hex strings given
// at their byte offsets.
func put(size int, at ...any) []byte {
	rec := make([]byte, size)
	for i := 0; i < len(at); i += 2 {
		b, err := hex.DecodeString(at[i+1].(string))
		if err != nil {
			panic(err)
		}
		copy(rec[at[i].(int):], b)
	}
	return rec
}

func TestSATemplate(t *testing.T) {
	tests := []struct {
		record  string
		assigns []string
		rec     []byte
		mask    uint64
	}{
		{"NR", nil, make([]byte, 108), 0},
		// python-rdma's example: saquery NR nodeInfo.portGUID=... LID=12.
		{"NR", []string{"nodeInfo.portGUID=0x0002c90300012345", "LID=12"},
			put(108, 0, "000c", 24, "0002c90300012345"), 1<<0 | 1<<8},
		{"NR", []string{"NodeInfo.PortGUID=0002:c903:0001:2345"}, put(108, 24, "0002c90300012345"), 1 << 8},
		{"NR", []string{"LID=012"}, put(108, 0, "000c"), 1},
		{"NR", []string{" LID = 0x10 "}, put(108, 0, "0010"), 1},
		{"NR", []string{"LID=1", "LID=2"}, put(108, 0, "0002"), 1},
		{"NR", []string{"nodeInfo.nodeType=2", "nodeInfo.vendorID=0x2c9"}, put(108, 6, "02", 41, "0002c9"), 1<<4 | 1<<13},
		{"NR", []string{"nodeDescription.nodeString=Hca1 HCA-1"}, put(108, 44, hex.EncodeToString([]byte("Hca1 HCA-1"))), 1 << 14},
		{"NR", []string{"NodeDescription=Hca1"}, put(108, 44, hex.EncodeToString([]byte("Hca1"))), 1 << 14},
		{"PIR", []string{"endportLID=0x10", "portNum=1", "portInfo.capabilityMask=0x2"},
			put(68, 0, "001001", 24, "00000002"), 1<<0 | 1<<1 | 1<<7},
		{"PIR", []string{"portInfo.portState=4", "portInfo.LMC=7"}, put(68, 36, "04", 38, "07"), 1<<15 | 1<<20},
		{"PIR", []string{"portInfo.linkSpeedExtEnabled=30"}, put(68, 67, "1e"), 1 << 57},
		{"MCMR", []string{"MGID=ff12:401b:ffff::ffff:ffff", "portGID=fe80::2:c903:0:1492", "joinState=1"},
			put(52, 0, "ff12401bffff000000000000ffffffff", 16, "fe800000000000000002c90300001492", 48, "01"), 1<<0 | 1<<1 | 1<<16},
		{"MCMR", []string{"MGID=0xff12"}, put(52, 14, "ff12"), 1},
		// The template ibtool sent opensm on the bench, answered with
		// one path.
		{"PR", []string{"SGID=fe80::10:1", "DGID=fe80::10:4", "numbPath=1"},
			put(64, 8, "fe800000000000000000000000100004", 24, "fe800000000000000000000000100001", 49, "01"), 1<<2 | 1<<3 | 1<<12},
		{"PR", []string{"SL=3", "reversible=1"}, put(64, 49, "80", 53, "03"), 1<<11 | 1<<15},
		{"PR", []string{"serviceID=0x1122334455667788"}, put(64, 0, "1122334455667788"), 1<<0 | 1<<1},
		{"MFTR", []string{"position=2", "blockNum=0x1ff"}, put(72, 2, "21ff"), 1<<1 | 1<<3},
		{"GIR", []string{"GUIDInfo.GUID7=0x1"}, put(72, 64, "0000000000000001"), 1 << 11},
		{"SL2VL", []string{"SLToVLMappingTable.SLtoVL=0x0123456789abcdef"}, put(16, 8, "0123456789abcdef"), 1 << 4},
		{"LFTR", []string{"linearForwardingTable.portBlock=0x102"}, put(72, 70, "0102"), 1 << 3},
		{"SR", []string{"serviceKey=0x0102030405060708090a0b0c0d0e0f10", "serviceName=ibtool", "serviceData16_1=0x2222"},
			put(176, 32, "0102030405060708090a0b0c0d0e0f10", 48, hex.EncodeToString([]byte("ibtool")), 130, "2222"), 1<<5 | 1<<6 | 1<<24},
		{"IIR", []string{"informInfo.trapNumber=64", "subscriberGID=fe80::10:1"},
			put(60, 0, "fe800000000000000000000000100001", 50, "0040"), 1<<0 | 1<<10},
		{"InformInfo", []string{"LIDRangeBegin=0xffff", "isGeneric=1", "QPN=1", "producerType=0xffffff"},
			put(36, 16, "ffff", 22, "01", 28, "000001", 33, "ffffff"), 1<<1 | 1<<4 | 1<<8 | 1<<12},
	}
	for _, tt := range tests {
		t.Run(tt.record+"/"+strings.Join(tt.assigns, ","), func(t *testing.T) {
			rec, mask, err := SATemplate(SARecordLayout(tt.record), tt.assigns)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.rec, rec); diff != "" {
				t.Errorf("unexpected record (-want +got):\n%s", diff)
			}
			if mask != tt.mask {
				t.Errorf("mask %#x, want %#x", mask, tt.mask)
			}
		})
	}
}

func TestSATemplateErrors(t *testing.T) {
	long := strings.Repeat("x", 65)
	tests := []struct {
		record  string
		assigns []string
		want    string
	}{
		{"LR", []string{"nosuch=1"}, `LinkRecord has no member "nosuch"; its members: fromLID, fromPort, toPort, toLID`},
		{"NR", []string{"portGUID=1"}, `NodeRecord has no member "portGUID" (did you mean nodeInfo.portGUID?); its members: LID, nodeInfo.baseVersion, `},
		{"NR", []string{"nodeString=x"}, `NodeRecord has no member "nodeString" (did you mean nodeDescription.nodeString?)`},
		{"NR", []string{"=1"}, `NodeRecord has no member ""; its members: LID,`},
		{"NR", []string{"LID"}, `NodeRecord: "LID": want MEMBER=VALUE`},
		{"NR", []string{"LID=65536"}, `NodeRecord: LID=65536: 65536 does not fit in 16 bits`},
		{"NR", []string{"LID=-1"}, `NodeRecord: LID=-1: want a decimal number or 0x and hex digits`},
		{"NR", []string{"LID=0x"}, `NodeRecord: LID=0x: want 0x and 1 to 16 hex digits`},
		{"NR", []string{"LID=0x1_0"}, `NodeRecord: LID=0x1_0: want 0x and 1 to 16 hex digits`},
		{"NR", []string{"LID="}, `NodeRecord: LID=: no value`},
		{"NR", []string{"nodeInfo.portGUID=0002:c903:0001"}, `NodeRecord: nodeInfo.portGUID=0002:c903:0001: `},
		{"NR", []string{"nodeDescription.nodeString=" + long}, `NodeRecord: nodeDescription.nodeString=` + long + `: 65 bytes of text, room for 64`},
		{"PIR", []string{"portInfo.LMC=8"}, `PortInfoRecord: portInfo.LMC=8: 8 does not fit in 3 bits`},
		{"MCMR", []string{"MGID=notagid"}, `MCMemberRecord: MGID=notagid: `},
		{"MCMR", []string{"MGID=0x" + strings.Repeat("f", 33)}, `33 hex digits, room for 32`},
		{"LFTR", []string{"linearForwardingTable.portBlock=12"}, `want 0x and up to 128 hex digits`},
		{"LFTR", []string{"linearForwardingTable.portBlock=0xzz"}, `want 0x and up to 128 hex digits`},
		{"PortInfo", nil, "PortInfo is not an SA record"},
	}
	for _, tt := range tests {
		l := SARecordLayout(tt.record)
		if l == nil {
			l = LayoutByName(tt.record)
		}
		_, _, err := SATemplate(l, tt.assigns)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SATemplate(%s, %q) = %v, want %q", tt.record, tt.assigns, err, tt.want)
		}
	}
	if _, _, err := SATemplate(nil, nil); err == nil || err.Error() != "a nil layout is not an SA record" {
		t.Errorf("SATemplate(nil) = %v", err)
	}
}

// FuzzSATemplate builds templates of any record from any settings: an
// error, or a record of the layout's size whose bits lie in the fields set,
// which decodes and encodes back unchanged, and a mask of the bits of the
// members set.
func FuzzSATemplate(f *testing.F) {
	for i, s := range []string{
		"nodeInfo.portGUID=0x0002c90300012345 LID=12",
		"nodeInfo.portGUID=0002:c903:0001:2345",
		"endportLID=1 portInfo.capabilityMask=0x2",
		"MGID=ff12:401b:ffff::ffff:ffff joinState=1",
		"SGID=fe80::10:1 numbPath=1 SL=3",
		"serviceName=x serviceKey=0x01",
		"nodeDescription.nodeString=Hca1",
		"LID=0x LID=",
		"linearForwardingTable.portBlock=0xff",
	} {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, which uint8, settings string) {
		l := SALayouts[int(which)%len(SALayouts)]
		assigns := strings.Fields(settings)
		rec, mask, err := SATemplate(l, assigns)
		if err != nil {
			return
		}
		if len(rec) != l.Size {
			t.Fatalf("%s: %d bytes, want %d", l.Name, len(rec), l.Size)
		}
		var set []Field
		var want uint64
		for _, a := range assigns {
			name, _, _ := strings.Cut(a, "=")
			c, ok := l.Component(name)
			if !ok {
				t.Fatalf("%s: %q set without a member", l.Name, a)
			}
			set = append(set, c.Field)
			want |= c.Mask
		}
		if mask != want {
			t.Fatalf("%s: mask %#x, want %#x", l.Name, mask, want)
		}
		covered := fieldMask(&Layout{Size: l.Size, Fields: set})
		for i := range rec {
			if rec[i]&^covered[i] != 0 {
				t.Fatalf("%s: byte %d is %#02x outside the fields set", l.Name, i, rec[i])
			}
		}
		a := l.New()
		if err := a.UnmarshalBinary(rec); err != nil {
			t.Fatal(err)
		}
		enc, err := a.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rec, enc); diff != "" {
			t.Fatalf("%s: encode(decode(template)) (-template +got):\n%s", l.Name, diff)
		}
	})
}
