package madtext

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/mad"
)

func TestAppendFieldsNodeInfo(t *testing.T) {
	data, err := hex.DecodeString(nodeInfoData)
	if err != nil {
		t.Fatal(err)
	}
	want := `BaseVers:........................1
ClassVers:.......................1
NodeType:........................Channel Adapter
NumPorts:........................2
SystemGuid:......................0x0000000000100000
Guid:............................0x0000000000100000
PortGuid:........................0x0000000000100001
PartCap:.........................64
DevId:...........................0x0000
Revision:........................0x000000a1
LocalPort:.......................1
VendorId:........................0x000000
`
	got := string(AppendDump(nil, mad.LayoutByName("NodeInfo"), data))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected dump (-want +got):\n%s", diff)
	}
}

func FuzzAppendFields(f *testing.F) {
	seed, _ := hex.DecodeString(nodeInfoData)
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range mad.Layouts {
			out := AppendDump(nil, l, data)
			// One line a labelled field, plus the newlines its value
			// holds: a capability mask's names, a description's own.
			want := 0
			for _, fl := range l.Fields {
				if fl.Label != "" {
					want += 1 + strings.Count(string(fl.AppendValue(nil, data)), "\n")
				}
			}
			if n := strings.Count(string(out), "\n"); n != want {
				t.Fatalf("%s: %d lines, want %d", l.Name, n, want)
			}
		}
	})
}

func BenchmarkDump(b *testing.B) {
	data := make([]byte, 256)
	buf := make([]byte, 0, 4096)
	for _, name := range []string{"PortInfo", "PortCounters"} {
		l := mad.LayoutByName(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendDump(buf[:0], l, data)
			}
		})
	}
}

// TestSARecordDump prints a captured NodeRecord with libibmad's labels:
// the embedded attributes' fields read at their place in the record.
func TestSARecordDump(t *testing.T) {
	data, _ := hex.DecodeString(nodeRecordHca1)
	got := string(AppendDump(nil, mad.SARecordLayout("NR"), data))
	for _, line := range []string{
		"Lid:.............................2\n",
		"PortGuid:........................0x0000000000100001\n",
		"LocalPort:.......................1\n",
		"NodeDesc:........................'Hca1'\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("dump has no line %q:\n%s", line, got)
		}
	}
}

// nodeRecordHca1 is the SA's NodeRecord of Hca1 on the same fabric.
const nodeRecordHca1 = "000200000101010200000000001000000000000000100000000000000010000100400000000000a1010000004863613100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

// nodeInfoData is the NodeInfo data ibsim returns for Hca1 of its
// net.2sw2path4hca example, read through port 1.
const nodeInfoData = "0101010200000000001000000000000000100000000000000010000100400000" +
	"000000a101000000" + "00000000000000000000000000000000000000000000000000000000"
