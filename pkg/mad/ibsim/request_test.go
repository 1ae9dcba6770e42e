package ibsim

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibtool/ibtool/pkg/rdma"
)

func TestRequestCaptured(t *testing.T) {
	needLittleEndian(t)
	tests := []struct {
		name  string
		frame string
		want  request // MAD checked separately
	}{
		{"Get", capturedFrameGet, request{DLID: rdma.PermissiveLID, SLID: rdma.PermissiveLID, Length: 256}},
		{"GetResp", capturedFrameGetResp, request{DLID: rdma.PermissiveLID, SLID: rdma.PermissiveLID, Length: 256}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := unhex(t, tt.frame)
			var got request
			if err := got.unmarshal(frame); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.MAD[:], frame[requestMADOffset:]) {
				t.Error("MAD not copied whole")
			}
			tt.want.MAD = got.MAD
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unexpected frame (-want +got):\n%s", diff)
			}
			enc := make([]byte, requestLen)
			got.marshal(enc)
			want := bytes.Clone(frame)
			clear(want[20:24]) // the shim's garbage padding; we send zeros
			if diff := cmp.Diff(want, enc); diff != "" {
				t.Errorf("unexpected encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestByteOrders(t *testing.T) {
	needLittleEndian(t)
	r := request{DLID: 0x1234, SLID: 0x0001, DQP: 1, SQP: 0x00abcdef, Status: 110, Length: 0x0102}
	enc := make([]byte, requestLen)
	r.marshal(enc)
	want := unhex(t, "12340000 00010000 00000001 00abcdef 0000006e 00000000 0000000000000102")
	if diff := cmp.Diff(want, enc[:requestMADOffset]); diff != "" {
		t.Errorf("unexpected frame header (-want +got):\n%s", diff)
	}
}

func TestRequestWrongSize(t *testing.T) {
	var r request
	for _, n := range []int{0, requestLen - 1, requestLen + 1} {
		if err := r.unmarshal(make([]byte, n)); err == nil {
			t.Errorf("unmarshal(%d bytes) succeeded", n)
		}
	}
}

func FuzzRequest(f *testing.F) {
	f.Add(unhex(f, capturedFrameGet))
	f.Add(unhex(f, capturedFrameGetResp))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r request
		if r.unmarshal(b) != nil {
			return
		}
		enc := make([]byte, requestLen)
		r.marshal(enc)
		var r2 request
		if err := r2.unmarshal(enc); err != nil {
			t.Fatal(err)
		}
		if r != r2 {
			t.Fatalf("round trip changed the frame: %+v != %+v", r, r2)
		}
	})
}
