package ibsim

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCtlConnectCaptured(t *testing.T) {
	needLittleEndian(t)
	// Encode what the shim sent: CONNECT for PID 8038 at Hca1.
	var data [clientInfoLen]byte
	ci := clientInfo{ID: 8038, NodeID: "Hca1"}
	ci.marshal(data[:])
	req := ctlMsg{Type: ctlConnect, Len: clientInfoLen}
	copy(req.Data[:], data[:])
	got := make([]byte, ctlMsgLen)
	req.marshal(got)
	if diff := cmp.Diff(unhex(t, capturedConnectHca1), got); diff != "" {
		t.Errorf("unexpected CONNECT bytes (-want +got):\n%s", diff)
	}

	// Decode ibsim's answer.
	var rep ctlMsg
	if err := rep.unmarshal(unhex(t, capturedConnectHca1Reply)); err != nil {
		t.Fatal(err)
	}
	if rep.Type != ctlConnect || rep.Len != clientInfoLen || rep.ClientID != 0 {
		t.Errorf("reply type %v len %d client %d, want CONNECT 44 0", rep.Type, rep.Len, rep.ClientID)
	}
	var gotCI clientInfo
	gotCI.unmarshal(rep.Data[:])
	if diff := cmp.Diff(clientInfo{ID: 2, NodeID: "Hca1"}, gotCI); diff != "" {
		t.Errorf("unexpected client info (-want +got):\n%s", diff)
	}
}

func TestCtlDisconnectCaptured(t *testing.T) {
	needLittleEndian(t)
	req := ctlMsg{ClientID: 2, Type: ctlDisconnect}
	got := make([]byte, ctlMsgLen)
	req.marshal(got)
	if diff := cmp.Diff(unhex(t, capturedDisconnect), got); diff != "" {
		t.Errorf("unexpected DISCONNECT bytes (-want +got):\n%s", diff)
	}
}

func TestClientInfoTruncatesNodeID(t *testing.T) {
	var b [clientInfoLen]byte
	for i := range b {
		b[i] = 0xee
	}
	ci := clientInfo{NodeID: "0123456789012345678901234567890123456789"}
	ci.marshal(b[:])
	if b[clientInfoLen-1] != 0 {
		t.Error("node ID not NUL-terminated")
	}
	var back clientInfo
	back.unmarshal(b[:])
	if want := ci.NodeID[:MaxNodeIDLen]; back.NodeID != want {
		t.Errorf("node ID %q, want %q", back.NodeID, want)
	}
}

func TestCtlUnmarshalErrors(t *testing.T) {
	needLittleEndian(t)
	good := unhex(t, capturedConnectHca1Reply)
	badMagic := bytes.Clone(good)
	badMagic[0] = 0
	badLen := bytes.Clone(good)
	badLen[12] = 65
	tests := []struct {
		name string
		b    []byte
	}{
		{"short", good[:79]},
		{"long", append(bytes.Clone(good), 0)},
		{"magic", badMagic},
		{"length over 64", badLen},
	}
	for _, tt := range tests {
		var m ctlMsg
		if err := m.unmarshal(tt.b); err == nil {
			t.Errorf("%s: unmarshal succeeded", tt.name)
		}
	}
}

func TestCtlTypeString(t *testing.T) {
	want := []string{"ERROR", "CONNECT", "DISCONNECT", "GET_PORT", "GET_VENDOR", "GET_GID",
		"GET_GUID", "GET_NODEINFO", "GET_PORTINFO", "SET_ISSM", "GET_PKEYS", "SIM_CTL(11)"}
	var got []string
	for i := range want {
		got = append(got, ctlType(i).String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}

func FuzzCtlMsg(f *testing.F) {
	f.Add(unhex(f, capturedConnectHca1))
	f.Add(unhex(f, capturedConnectHca1Reply))
	f.Add(unhex(f, capturedDisconnect))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m ctlMsg
		if m.unmarshal(b) != nil {
			return
		}
		enc := make([]byte, ctlMsgLen)
		m.marshal(enc)
		if !bytes.Equal(enc, b) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", enc, b)
		}
		var ci clientInfo
		ci.unmarshal(m.Data[:])
		var v Vendor
		v.unmarshal(m.Data[:])
		_ = decodePKeys(m.Data[:])
	})
}
