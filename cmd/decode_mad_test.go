package cmd

import (
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
)

// switch2NodeInfo is a GetResp of NodeInfo from Switch2 (LID 3) of the
// bench's small fabric, as smpquery -vv dumps it.
const switch2NodeInfo = `01 01 01 81 00 00 00 00  00 01 00 00 e4 f4 e6 06
00 11 00 00 00 00 00 00  00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
01 01 02 08 00 00 00 00  00 20 00 01 00 00 00 00
00 20 00 01 00 00 00 00  00 20 00 01 00 08 00 00
00 00 00 a1 00 00 00 00  00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
` + "00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00\n"

func TestDecodeMad(t *testing.T) {
	mad := switch2NodeInfo + strings.Repeat("00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00\n", 7)
	tests := []struct {
		args    []string
		in      string
		want    string
		wantErr string
	}{
		{nil, mad, `BaseVersion:.....................1
MgmtClass:.......................0x01 (SMI)
ClassVersion:....................1
Method:..........................0x81 (GetResp)
Status:..........................0x0000
TransactionID:...................0x00010000e4f4e606
AttributeID:.....................0x0011
AttributeModifier:...............0x00000000
# NodeInfo
BaseVers:........................1
ClassVers:.......................1
NodeType:........................Switch
NumPorts:........................8
SystemGuid:......................0x0000000000200001
Guid:............................0x0000000000200001
PortGuid:........................0x0000000000200001
PartCap:.........................8
DevId:...........................0x0000
Revision:........................0x000000a1
LocalPort:.......................0
VendorId:........................0x000000
`, ""},
		{[]string{"--umad"}, strings.Repeat("00", 64) + mad, "", ""},
		{[]string{"-o", "2"}, "ffff" + mad, "", ""},
		{nil, "0x0101", "", "MAD header: need 24 bytes, have 2"},
		{nil, "010", "", "an odd number of hex digits (3)"},
		{nil, "zz", "", "not hex"},
		{[]string{"-o", "9"}, "0101", "", "offset 9: the input has 2 bytes"},
		{[]string{"--umad"}, mad[:100], "", "shorter than a umad header"},
	}
	want0 := tests[0].want
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+tt.wantErr, func(t *testing.T) {
			f, out, errOut := testFactory(nil)
			f.IO.In = strings.NewReader(tt.in)
			code := Main(append([]string{"decode_mad"}, tt.args...), f)
			if tt.wantErr != "" {
				if code != ExitUsage || !strings.Contains(errOut.String(), tt.wantErr) {
					t.Errorf("exit %d, stderr %q; want usage error %q", code, errOut, tt.wantErr)
				}
				return
			}
			want := tt.want
			if want == "" {
				want = want0
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if diff := cmp.Diff(want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseHex(f *testing.F) {
	f.Add(switch2NodeInfo)
	f.Add("0x01:02 03")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseHex(s)
		if err == nil && len(b) > len(s) {
			t.Fatalf("%d bytes from %d characters", len(b), len(s))
		}
	})
}

func TestDecodeMadSA(t *testing.T) {
	req := &mad.Packet{MAD: make([]byte, 256)}
	req.MAD[0], req.MAD[1], req.MAD[2], req.MAD[3] = 1, 3, 2, byte(mad.MethodGetTable)
	binary.BigEndian.PutUint16(req.MAD[16:], 0x20) // LinkRecord
	// The one DATA segment of a GetTableResp of two LinkRecords.
	m := mad.RMPPSegments(madtest.SAResponse(req, 0, 8, []byte{0, 1, 3, 1, 0, 2}, []byte{0, 2, 1, 3, 0, 1}), 56)[0]
	f, out, errOut := testFactory(nil)
	f.IO.In = strings.NewReader(hex.EncodeToString(m))
	if code := Main([]string{"decode_mad"}, f); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got := out.String()
	got = got[strings.Index(got, "AttributeOffset"):]
	want := `AttributeOffset:.................1
ComponentMask:...................0x0000000000000000
# LinkRecord 1
FromLID:.........................1
FromPort:........................3
ToPort:..........................1
ToLID:...........................2
# LinkRecord 2
FromLID:.........................2
FromPort:........................1
ToPort:..........................3
ToLID:...........................1
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decode_mad (-want +got):\n%s", diff)
	}
}
