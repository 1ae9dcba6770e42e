package mad

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// fieldMask returns, for a layout, a mask of the bits its fields cover.
func fieldMask(l *Layout) []byte {
	m := make([]byte, l.Size)
	for _, f := range l.Fields {
		for bit := f.Offset; bit < f.Offset+f.Width; bit++ {
			m[bit/8] |= 0x80 >> (bit % 8)
		}
	}
	if b := l.Block; b != nil {
		el := fieldMask(b.Element)
		for i := range b.Count {
			for j, c := range el {
				m[b.Offset+i*b.Stride+j] |= c
			}
		}
	}
	return m
}

// TestRoundTrip decodes random bytes with every generated attribute and
// encodes them again: every bit a field covers comes back, every other bit
// is zero.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, l := range allLayouts() {
		t.Run(l.Name, func(t *testing.T) {
			for range 20 {
				in := make([]byte, l.Size)
				for i := range in {
					in[i] = byte(rng.Uint32())
				}
				a := l.New()
				if err := a.UnmarshalBinary(in); err != nil {
					t.Fatal(err)
				}
				if a.Layout() != l {
					t.Fatalf("Layout() = %s", a.Layout().Name)
				}
				got, err := a.AppendBinary([]byte{0xee})
				if err != nil {
					t.Fatal(err)
				}
				mask := fieldMask(l)
				want := []byte{0xee}
				for i := range in {
					want = append(want, in[i]&mask[i])
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("round trip (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestUnmarshalShort(t *testing.T) {
	for _, l := range allLayouts() {
		err := l.New().UnmarshalBinary(make([]byte, l.Size-1))
		want := &ShortDataError{Attr: l.Name, Want: l.Size, Got: l.Size - 1}
		if diff := cmp.Diff(want, err); diff != "" {
			t.Errorf("%s (-want +got):\n%s", l.Name, diff)
		}
	}
}

// TestNodeInfoCaptured decodes NodeInfo as ibsim sent it for Hca1.
func TestNodeInfoCaptured(t *testing.T) {
	data, _ := hex.DecodeString(nodeInfoHca1)
	var got NodeInfo
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	want := NodeInfo{
		BaseVersion: 1, ClassVersion: 1, NodeType: 1, NumPorts: 2,
		SystemImageGUID: 0x100000, NodeGUID: 0x100000, PortGUID: 0x100001,
		PartitionCap: 64, Revision: 0xa1, LocalPortNum: 1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NodeInfo (-want +got):\n%s", diff)
	}
	enc, err := got.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(data[:layoutNodeInfo.Size], enc); diff != "" {
		t.Errorf("encoding (-want +got):\n%s", diff)
	}
}

// TestPortInfoBits checks narrow PortInfo fields land on the spec's bits.
func TestPortInfoBits(t *testing.T) {
	pi := PortInfo{LID: 0x1234, LinkState: 4, PhysLinkState: 5, LMC: 7, NeighborMTU: 5, OperationalVLs: 4, LinkSpeedExtEnabled: 30, CapabilityMask2: 0x8001}
	b, _ := pi.MarshalBinary()
	checks := []struct {
		off  int
		want byte
	}{
		{16, 0x12}, {17, 0x34},
		{32, 0x04},             // LinkSpeedSupported 0, LinkState 4
		{33, 0x50},             // PhysLinkState 5, LinkDownDefState 0
		{34, 0x07},             // ProtectBits 0, reserved, LMC 7
		{36, 0x50},             // NeighborMTU 5, SMSL 0
		{43, 0x40},             // OperationalVLs 4
		{60, 0x80}, {61, 0x01}, // CapabilityMask2
		{63, 30}, // LinkSpeedExtEnabled in the low 5 bits
	}
	for _, c := range checks {
		if b[c.off] != c.want {
			t.Errorf("byte %d = %#02x, want %#02x", c.off, b[c.off], c.want)
		}
	}
}

func TestUnmarshalAllocatesNothing(t *testing.T) {
	data := make([]byte, 256)
	for _, l := range allLayouts() {
		a := l.New()
		if n := testing.AllocsPerRun(10, func() { _ = a.UnmarshalBinary(data) }); n != 0 {
			t.Errorf("%s: %v allocations per decode", l.Name, n)
		}
	}
}

func TestLayoutByName(t *testing.T) {
	if l := LayoutByName("portinfo"); l == nil || l.Name != "PortInfo" || l.ID != AttrPortInfo || l.Class != ClassSMI {
		t.Errorf("LayoutByName(portinfo) = %+v", l)
	}
	if l := LayoutByName("nosuch"); l != nil {
		t.Errorf("LayoutByName(nosuch) = %s", l.Name)
	}
	var _ rdma.GUID = NodeInfo{}.PortGUID
}

func FuzzUnmarshal(f *testing.F) {
	seed, _ := hex.DecodeString(nodeInfoHca1)
	f.Add(seed)
	f.Add(make([]byte, 256))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, l := range allLayouts() {
			a := l.New()
			if err := a.UnmarshalBinary(data); err != nil {
				if len(data) >= l.Size {
					t.Fatalf("%s: %v", l.Name, err)
				}
				continue
			}
			out, err := a.AppendBinary(nil)
			if err != nil || len(out) != l.Size {
				t.Fatalf("%s: %d bytes, %v", l.Name, len(out), err)
			}
			b := l.New()
			if err := b.UnmarshalBinary(out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, b); diff != "" {
				t.Fatalf("%s: decode(encode(x)) != x (-want +got):\n%s", l.Name, diff)
			}
		}
	})
}

func BenchmarkUnmarshal(b *testing.B) {
	data := make([]byte, 256)
	for _, name := range []string{"NodeInfo", "PortInfo", "PortCounters", "PortCountersExtended"} {
		l := LayoutByName(name)
		a := l.New()
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = a.UnmarshalBinary(data)
			}
		})
	}
}

func BenchmarkAppendBinary(b *testing.B) {
	for _, name := range []string{"NodeInfo", "PortInfo", "PortCounters", "PortCountersExtended"} {
		a := LayoutByName(name).New()
		buf := make([]byte, 0, 256)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = a.AppendBinary(buf[:0])
			}
		})
	}
}

// allLayouts returns the standard and the vendor classes' layouts.
func allLayouts() []*Layout {
	return append(Layouts[:len(Layouts):len(Layouts)], VendorLayouts...)
}
