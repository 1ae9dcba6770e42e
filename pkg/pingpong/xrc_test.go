package pingpong

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestXRCWire(t *testing.T) {
	d := XRCDest{LID: 0x1a, RecvQPN: 0x11, SendQPN: 0x12, PSN: 0x5b1f3a, SRQN: 0x1, GID: rxeGID}
	got := d.Wire()
	want := "001a:000011:000012:5b1f3a:000001:fe800000000000000000000012345678\x00"
	if len(got) != XRCWireSize || XRCWireSize != 66 {
		t.Fatalf("Wire() is %d bytes, XRCWireSize %d, want 66 (rdma-core's MSG_SIZE)", len(got), XRCWireSize)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Wire() (-want +got):\n%s", diff)
	}
	back, err := ParseXRCWire(got)
	if err != nil || back != d {
		t.Errorf("ParseXRCWire(Wire()) = %+v, %v, want %+v", back, err, d)
	}
	wantLine := "   local: LID 001a, QPN RECV 000011 SEND 000012, PSN 5b1f3a, SRQN 000001, GID fe80::1234:5678\n"
	if diff := cmp.Diff(wantLine, d.Line("local")); diff != "" {
		t.Errorf("Line (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(d.Line("remote"), "  remote: ") {
		t.Errorf("Line(remote) = %q", d.Line("remote"))
	}
}

func TestParseXRCWire(t *testing.T) {
	for _, tt := range []struct{ msg, wantErr string }{
		{"0000:000011:abcdef:fe800000000000000000000012345678", "want LID:RECV_QPN:SEND_QPN:PSN:SRQN:GID"},
		{"0000:000011:000012:000013:1000000:fe800000000000000000000012345678", "bad SRQN"},
		{"0000:000011:000012:000013:000014:fe80", "not 32 hex digits"},
		{"x:000011:000012:000013:000014:fe800000000000000000000012345678", "bad LID"},
	} {
		if _, err := ParseXRCWire([]byte(tt.msg)); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseXRCWire(%q) error %v, want one containing %q", tt.msg, err, tt.wantErr)
		}
	}
}

func FuzzParseXRCWire(f *testing.F) {
	f.Add([]byte("001a:000011:000012:5b1f3a:000001:fe800000000000000000000012345678\x00"))
	f.Add([]byte(":::::"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		d, err := ParseXRCWire(msg)
		if err != nil {
			return
		}
		back, err := ParseXRCWire(d.Wire())
		if err != nil || back != d {
			t.Fatalf("%q parsed to %+v, whose wire form parses to %+v, %v", msg, d, back, err)
		}
	})
}

// TestXRCExchange: the client sends its address, reads the server's;
// at the end each sends "END\0" and reads the other's.
func TestXRCExchange(t *testing.T) {
	cli, srv := net.Pipe()
	me := XRCDest{RecvQPN: 1, SendQPN: 2, PSN: 3, SRQN: 4}
	them := XRCDest{RecvQPN: 5, SendQPN: 6, PSN: 7, SRQN: 8, GID: rxeGID}
	errc := make(chan error, 1)
	var got XRCDest
	go func() {
		s := NewConn(srv)
		var err error
		if got, err = s.RecvXRC(); err == nil {
			if err = s.SendXRC(them); err == nil {
				if err = s.RecvEnd(); err == nil {
					err = s.SendEnd()
				}
			}
		}
		errc <- err
	}()
	c := NewConn(cli)
	if err := c.SendXRC(me); err != nil {
		t.Fatal(err)
	}
	rem, err := c.RecvXRC()
	if err != nil || rem != them {
		t.Fatalf("client got %+v, %v, want %+v", rem, err, them)
	}
	if err := c.SendEnd(); err != nil {
		t.Fatal(err)
	}
	if err := c.RecvEnd(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil || got != me {
		t.Fatalf("server got %+v, %v, want %+v", got, err, me)
	}
}
