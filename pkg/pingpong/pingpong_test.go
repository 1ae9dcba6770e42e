package pingpong

import (
	"bytes"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rxeGID is rxe0's link-local GID on the VM test's dummy0.
var rxeGID = [16]byte{0xfe, 0x80, 12: 0x12, 0x34, 0x56, 0x78}

func TestWire(t *testing.T) {
	tests := []struct {
		name string
		d    Dest
		want string
	}{
		{"RoCE", Dest{QPN: 0x11, PSN: 0xabcdef, GID: rxeGID}, "0000:000011:abcdef:fe800000000000000000000012345678"},
		{"InfiniBand, no GID", Dest{LID: 0x1a, QPN: 0x4a2, PSN: 0x1}, "001a:0004a2:000001:00000000000000000000000000000000"},
		{"24-bit fields masked", Dest{LID: 0xffff, QPN: 0x1ffffff, PSN: 0xfffffff}, "ffff:ffffff:ffffff:00000000000000000000000000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.d.Wire()
			if len(got) != WireSize || got[WireSize-1] != 0 {
				t.Fatalf("Wire() is %d bytes ending in %#x, want %d ending in NUL", len(got), got[len(got)-1], WireSize)
			}
			if diff := cmp.Diff(tt.want, string(got[:WireSize-1])); diff != "" {
				t.Errorf("Wire() (-want +got):\n%s", diff)
			}
			back, err := ParseWire(got)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.d
			want.QPN &= 0xffffff
			want.PSN &= 0xffffff
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("ParseWire(Wire()) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseWire(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		want    Dest
		wantErr string
	}{
		{"rdma-core's message with its NUL", "0000:000011:abcdef:fe800000000000000000000012345678\x00", Dest{QPN: 0x11, PSN: 0xabcdef, GID: rxeGID}, ""},
		{"garbage after the NUL", "0001:000002:000003:00000000000000000000000000000000\x00zz", Dest{LID: 1, QPN: 2, PSN: 3}, ""},
		{"upper-case hex", "00AB:0000FF:00000A:FE800000000000000000000012345678", Dest{LID: 0xab, QPN: 0xff, PSN: 0xa, GID: rxeGID}, ""},
		{"three fields", "0000:000011:abcdef", Dest{}, "want LID:QPN:PSN:GID"},
		{"LID too wide", "10000:000011:abcdef:fe800000000000000000000012345678", Dest{}, "bad LID"},
		{"QPN too wide", "0000:1000000:abcdef:fe800000000000000000000012345678", Dest{}, "bad QPN"},
		{"PSN not hex", "0000:000011:xyz:fe800000000000000000000012345678", Dest{}, "bad PSN"},
		{"short GID", "0000:000011:abcdef:fe80", Dest{}, "not 32 hex digits"},
		{"GID not hex", "0000:000011:abcdef:fe80000000000000000000001234567g", Dest{}, "not 32 hex digits"},
		{"empty", "", Dest{}, "want LID:QPN:PSN:GID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWire([]byte(tt.msg))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseWire(%q) error %v, want one containing %q", tt.msg, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseWire (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseWire(f *testing.F) {
	f.Add([]byte("0000:000011:abcdef:fe800000000000000000000012345678\x00"))
	f.Add([]byte("ffff:ffffff:ffffff:ffffffffffffffffffffffffffffffff"))
	f.Add([]byte(":::"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		d, err := ParseWire(msg)
		if err != nil {
			return
		}
		back, err := ParseWire(d.Wire())
		if err != nil || back != d {
			t.Fatalf("%q parsed to %+v, whose wire form parses to %+v, %v", msg, d, back, err)
		}
	})
}

func TestFormatGID(t *testing.T) {
	tests := []struct {
		gid  string // parsed with netip, which accepts every form
		want string
	}{
		{"::", "::"},
		{"fe80::1234:5678", "fe80::1234:5678"},
		{"fe80::b:cff:fe0d:e0f", "fe80::b:cff:fe0d:e0f"},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1"},
		{"::192.0.2.1", "::192.0.2.1"},
		{"::1", "::1"},
		{"::2:0:0", "::2:0:0"},
		{"1:0:0:2:0:0:0:3", "1:0:0:2::3"},
		{"1:0:0:2:0:0:3:4", "1::2:0:0:3:4"},
		{"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
		{"1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"},
		{"1::", "1::"},
		{"::ffff:0:0", "::ffff:0.0.0.0"},
	}
	for _, tt := range tests {
		g := netip.MustParseAddr(tt.gid).As16()
		if got := FormatGID(g); got != tt.want {
			t.Errorf("FormatGID(%s) = %q, want %q", tt.gid, got, tt.want)
		}
	}
}

func TestDestString(t *testing.T) {
	d := Dest{QPN: 0x11, PSN: 0xabcdef, GID: rxeGID}
	want := "LID 0x0000, QPN 0x000011, PSN 0xabcdef, GID fe80::1234:5678"
	if got := d.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if !d.Global() || (Dest{LID: 1}).Global() {
		t.Error("Global: want true for a GID with an interface ID, false for none")
	}
}

func TestExchange(t *testing.T) {
	cli, srv := net.Pipe()
	mine := []Dest{{LID: 1, QPN: 0x11, PSN: 0x22, GID: rxeGID}, {LID: 1, QPN: 0x12, PSN: 0x23}}
	theirs := []Dest{{LID: 2, QPN: 0x31, PSN: 0x42}, {LID: 2, QPN: 0x32, PSN: 0x43, GID: rxeGID}}
	type result struct {
		got []Dest
		err error
	}
	srvDone := make(chan result)
	var connected []Dest
	go func() {
		got, err := NewConn(srv).Server(theirs, func(rem []Dest) error { connected = rem; return nil })
		srvDone <- result{got, err}
	}()
	got, err := NewConn(cli).Client(mine)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(theirs, got); diff != "" {
		t.Errorf("the client got (-want +got):\n%s", diff)
	}
	r := <-srvDone
	if r.err != nil {
		t.Fatal(r.err)
	}
	if diff := cmp.Diff(mine, r.got); diff != "" {
		t.Errorf("the server got (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(mine, connected); diff != "" {
		t.Errorf("the server connected to (-want +got):\n%s", diff)
	}
}

// TestExchangeBytes pins the bytes on the wire against rdma-core's:
// the client's message, the server's, then "done" and its NUL.
func TestExchangeBytes(t *testing.T) {
	cli, srv := net.Pipe()
	var fromClient bytes.Buffer
	go func() {
		c := NewConn(cli)
		c.Client([]Dest{{QPN: 0x11, PSN: 0x1, GID: rxeGID}})
		c.Close()
	}()
	buf := make([]byte, WireSize)
	srv.SetDeadline(time.Now().Add(5 * time.Second))
	n, _ := readFull(srv, buf)
	fromClient.Write(buf[:n])
	srv.Write(Dest{QPN: 0x12, PSN: 0x2}.Wire())
	n, _ = readFull(srv, buf[:5])
	fromClient.Write(buf[:n])
	want := "0000:000011:000001:fe800000000000000000000012345678\x00done\x00"
	if diff := cmp.Diff(want, fromClient.String()); diff != "" {
		t.Errorf("the client's bytes (-want +got):\n%s", diff)
	}
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestExchangeErrors(t *testing.T) {
	tests := []struct {
		name    string
		peer    string // what the server sends back
		wantErr string
	}{
		{"short answer", "0000:0000", "the peer sent 9 of 52 bytes"},
		{"bad answer", "zzzz:000011:abcdef:fe800000000000000000000012345678\x00", "bad LID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cli, srv := net.Pipe()
			go func() {
				buf := make([]byte, WireSize)
				readFull(srv, buf)
				srv.Write([]byte(tt.peer))
				srv.Close()
			}()
			_, err := NewConn(cli).Client([]Dest{{}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Client error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseNum(t *testing.T) {
	tests := []struct {
		in      string
		max     uint64
		want    uint64
		wantErr string
	}{
		{"4096", 1 << 31, 4096, ""},
		{"0x1000", 1 << 31, 4096, ""},
		{"010", 100, 8, ""},
		{"0", 100, 0, ""},
		{" 12", 100, 12, ""},
		{"12k", 100, 0, `invalid -s size "12k": want a number`},
		{"", 100, 0, "want a number"},
		{"-1", 100, 0, "want a number"},
		{"+1", 100, 0, "want a number"},
		{"0x", 100, 0, "want a number"},
		{"09", 100, 0, "want a number"},
		{"101", 100, 0, "want at most 100"},
	}
	for _, tt := range tests {
		got, err := ParseNum("-s size", tt.in, tt.max)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseNum(%q) = %d, %v, want an error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseNum(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParseNum(f *testing.F) {
	for _, s := range []string{"4096", "0x10", "017", "", "-1", "0x", " 9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseNum("n", s, 1<<32)
		if err == nil && v > 1<<32 {
			t.Fatalf("ParseNum(%q) = %d, over its maximum", s, v)
		}
	})
}

func TestMTUBytes(t *testing.T) {
	for in, want := range map[uint64]int{256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5, 0: 0, 1500: 0, 8192: 0, 128: 0} {
		if got := MTUBytes(in); got != want {
			t.Errorf("MTUBytes(%d) = %d, want %d", in, got, want)
		}
	}
}

func TestReport(t *testing.T) {
	tests := []struct {
		size, iters int
		elapsed     time.Duration
		want        string
	}{
		// The wants are what rdma-core's printf arithmetic (a float
		// usec) prints for the same microseconds, checked with its
		// three lines compiled in C.
		{4096, 1000, 91234 * time.Microsecond, "8192000 bytes in 0.09 seconds = 718.33 Mbit/sec\n1000 iters in 0.09 seconds = 91.23 usec/iter\n"},
		{1, 3, 7 * time.Microsecond, "6 bytes in 0.00 seconds = 6.86 Mbit/sec\n3 iters in 0.00 seconds = 2.33 usec/iter\n"},
		// Under a microsecond: C's float division by zero.
		{1, 3, 0, "6 bytes in 0.00 seconds = inf Mbit/sec\n3 iters in 0.00 seconds = 0.00 usec/iter\n"},
		{0, 0, 0, "0 bytes in 0.00 seconds = -nan Mbit/sec\n0 iters in 0.00 seconds = -nan usec/iter\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := Report(&b, tt.size, tt.iters, tt.elapsed); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("Report(%d, %d, %s) (-want +got):\n%s", tt.size, tt.iters, tt.elapsed, diff)
		}
	}
}

// TestDialAccept runs the exchange over a real TCP connection on the
// loopback interface.
func TestDialAccept(t *testing.T) {
	l, err := Listen(t.Context(), 0)
	if err != nil {
		t.Skipf("no TCP here: %v", err)
	}
	port := l.l.Addr().(*net.TCPAddr).Port
	l.Close()
	type res struct {
		d   []Dest
		err error
	}
	done := make(chan res, 1)
	go func() {
		c, err := Accept(t.Context(), port)
		if err != nil {
			done <- res{nil, err}
			return
		}
		defer c.Close()
		d, err := c.Server([]Dest{{QPN: 2}}, func([]Dest) error { return nil })
		done <- res{d, err}
	}()
	var c *Conn
	for i := 0; i < 50; i++ {
		if c, err = Dial(t.Context(), "127.0.0.1", port); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rem, err := c.Client([]Dest{{QPN: 1}})
	if err != nil || rem[0].QPN != 2 {
		t.Fatalf("client got %+v, %v", rem, err)
	}
	if r := <-done; r.err != nil || r.d[0].QPN != 1 {
		t.Fatalf("server got %+v, %v", r.d, r.err)
	}
}
