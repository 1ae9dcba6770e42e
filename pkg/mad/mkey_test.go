package mad_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/mad"
	"github.com/ibtool/ibtool/pkg/mad/madtest"
	"github.com/ibtool/ibtool/pkg/madrpc"
)

// TestTransactorMKey checks that the transactor's M_Key goes in every SMP
// that carries none, LID-routed, directed-route, sent or planned, and in
// nothing else: byte 24 of a PMA or CC MAD is not an M_Key.
func TestTransactorMKey(t *testing.T) {
	const key = 0x0102030405060708
	tests := []struct {
		name string
		req  madrpc.Request
		send bool // Send (a trap) instead of Do
		want uint64
	}{
		{"LID Get", madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: mad.AttrNodeInfo}, false, key},
		{"DR Get", madrpc.Request{Path: mad.DRPath(0, 1, 3), Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: mad.AttrNodeInfo}, false, key},
		{"DR Set", madrpc.Request{Path: mad.DRPath(0, 1), Class: mad.ClassSMI, Method: mad.MethodSet, AttrID: mad.AttrPortInfo}, false, key},
		{"own key", madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: mad.AttrNodeInfo, MKey: 7}, false, 7},
		{"trap", madrpc.Request{Path: mad.LIDPath(1), Class: mad.ClassSMI, Method: mad.MethodTrap, AttrID: mad.AttrNotice}, true, key},
		{"PMA", madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassPerf, Method: mad.MethodGet, AttrID: mad.AttrPortCounters}, false, 0},
		{"CC without a CC_Key", madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassCC, Method: mad.MethodGet, AttrID: mad.AttrCongestionInfo}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent []byte
			tr := madtest.New(func(req *mad.Packet) []mad.Packet {
				sent = req.MAD
				off := mad.SMPDataOffset
				return []mad.Packet{madtest.Reply(req, mad.StatusOK, off, nil)}
			})
			x := madrpc.NewTransactor(tr, madrpc.TransactorOptions{MKey: key, Timeout: 50 * time.Millisecond})
			defer x.Close()
			req := tt.req
			var err error
			if tt.send {
				err = x.Send(context.Background(), &req)
			} else {
				_, err = x.Do(context.Background(), &req)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := binary.BigEndian.Uint64(sent[24:]); got != tt.want {
				t.Errorf("M_Key field %#x, want %#x", got, tt.want)
			}
			if req.MKey != tt.req.MKey {
				t.Errorf("the caller's request changed: MKey %#x", req.MKey)
			}
		})
	}
}

// TestTransactorMKeyDryRun checks that a planned Set is the MAD that
// would go, M_Key and all.
func TestTransactorMKeyDryRun(t *testing.T) {
	x := madrpc.NewTransactor(madtest.New(nil), madrpc.TransactorOptions{MKey: 0x1234,
		DryRun: func(context.Context, *madrpc.Plan) error { return nil }})
	defer x.Close()
	req := &madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassSMI, Method: mad.MethodSet, AttrID: mad.AttrPortInfo, Name: "PortInfo"}
	resp, err := x.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint64(resp.MAD[24:]); !resp.DryRun || got != 0x1234 {
		t.Errorf("dry run %v, M_Key %#x; want a dry run with M_Key 0x1234", resp.DryRun, got)
	}
}

// TestTimeoutErrorMKey checks what a timeout says of the M_Key: an SMP's
// carries the class and key, which callers use to suggest -y.
func TestTimeoutErrorMKey(t *testing.T) {
	x := madrpc.NewTransactor(madtest.New(func(*mad.Packet) []mad.Packet { return nil }),
		madrpc.TransactorOptions{MKey: 0x99, Timeout: 5 * time.Millisecond, Retries: -1})
	defer x.Close()
	ctx := context.Background()
	type got struct {
		Class   mad.Class
		MKey    uint64
		Protect bool
	}
	for _, tt := range []struct {
		req  madrpc.Request
		want got
	}{
		{madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: mad.AttrNodeInfo}, got{mad.ClassSMI, 0x99, true}},
		{madrpc.Request{Path: mad.DRPath(0, 2), Class: mad.ClassSMI, Method: mad.MethodGet, AttrID: mad.AttrNodeInfo}, got{mad.ClassSMIDirect, 0x99, true}},
		{madrpc.Request{Path: mad.LIDPath(3), Class: mad.ClassPerf, Method: mad.MethodGet, AttrID: mad.AttrPortCounters}, got{mad.ClassPerf, 0, false}},
	} {
		_, err := x.Do(ctx, &tt.req)
		var te *madrpc.TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("%v: %v, want a timeout", tt.req.Class, err)
		}
		if diff := cmp.Diff(tt.want, got{te.Class, te.MKey, te.MaybeMKeyProtected()}); diff != "" {
			t.Errorf("%v: unexpected timeout (-want +got):\n%s", tt.req.Class, diff)
		}
	}
}
