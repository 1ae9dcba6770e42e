package trace

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/cmd/internal/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonkeys"
	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
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
			f, out, errOut := cmdutil.NewTestFactory(nil)
			f.IO.In = strings.NewReader(tt.in)
			code := cmdutil.RunTool(append([]string{"decode_mad"}, tt.args...), f)
			if tt.wantErr != "" {
				if code != cmdutil.ExitUsage || !strings.Contains(errOut.String(), tt.wantErr) {
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

// saGetTableRespHex is the one DATA segment of a GetTableResp to a
// GetTable of attr, carrying records, in hex.
func saGetTableRespHex(t *testing.T, attr mad.AttrID, records ...mad.Attribute) string {
	t.Helper()
	h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSA, ClassVersion: 2, Method: mad.MethodGetTable, AttrID: attr}
	req, err := h.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	req = append(req, bytes.Repeat([]byte{0}, mad.Size-len(req))...)
	var recs [][]byte
	recLen := 0
	for _, r := range records {
		b, err := r.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		recs, recLen = append(recs, b), len(b)
	}
	return hex.EncodeToString(madrpc.RMPPSegments(madtest.SAResponse(&mad.Packet{MAD: req}, 0, recLen, recs...), mad.SAHeaderEnd)[0])
}

func TestDecodeMadSA(t *testing.T) {
	in := saGetTableRespHex(t, mad.AttrLinkRecord,
		&mad.LinkRecord{FromLID: 1, FromPort: 3, ToPort: 1, ToLID: 2},
		&mad.LinkRecord{FromLID: 2, FromPort: 1, ToPort: 3, ToLID: 1})
	f, out, errOut := cmdutil.NewTestFactory(nil)
	f.IO.In = strings.NewReader(in)
	if code := cmdutil.RunTool([]string{"decode_mad"}, f); code != 0 {
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

// TestDecodeMadJSONKeys pins the keys of --json: an SMP attribute, one
// ibtool has no layout for, SA records and an SA attribute without one.
func TestDecodeMadJSONKeys(t *testing.T) {
	smp := switch2NodeInfo + strings.Repeat("00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00\n", 7)
	header := []string{"header.AttrID", "header.AttrMod", "header.BaseVersion", "header.ClassSpecific",
		"header.ClassVersion", "header.Method", "header.MgmtClass", "header.Status", "header.TID"}
	saHeader := append([]string{"attributeOffset", "componentMask", "rmpp.Flags", "rmpp.PayloadLength",
		"rmpp.RespTime", "rmpp.SegmentNumber", "rmpp.Status", "rmpp.Type", "rmpp.Version", "smKey"}, header...)
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"NodeInfo", smp, append([]string{"attribute", "data.baseVersion", "data.classVersion",
			"data.deviceID", "data.localPortNum", "data.nodeGUID", "data.nodeType", "data.numPorts", "data.partitionCap",
			"data.portGUID", "data.revision", "data.systemImageGUID", "data.vendorID"}, header...)},
		{"unknown SMP attribute", strings.Replace(smp, "00 11 00 00", "ff 01 00 00", 1), header},
		{"LinkRecords", saGetTableRespHex(t, mad.AttrLinkRecord, &mad.LinkRecord{FromLID: 1}, &mad.LinkRecord{FromLID: 2}),
			append([]string{"attribute", "records[].fromLID", "records[].fromPort", "records[].toLID",
				"records[].toPort"}, saHeader...)},
		{"unknown SA attribute", saGetTableRespHex(t, 0xff01), saHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, out, errOut := cmdutil.NewTestFactory(nil)
			f.IO.In = strings.NewReader(tt.in)
			if code := cmdutil.RunTool([]string{"decode_mad", "--json"}, f); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			var doc any
			if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, jsonkeys.Leaves(doc)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}
