package rdmacm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibtool/ibtool/pkg/verbs"
)

func TestPortSpaceTakes(t *testing.T) {
	types := []verbs.QPType{verbs.QPTypeRC, verbs.QPTypeUC, verbs.QPTypeUD, verbs.QPTypeXRCSend, verbs.QPTypeXRCRecv}
	want := map[PortSpace]string{
		PortSpaceTCP:   "RC",
		PortSpaceUDP:   "UD",
		PortSpaceIPoIB: "UD",
		PortSpaceIB:    "RC UD XRC_SEND XRC_RECV",
		PortSpace(0x7): "RC UC UD XRC_SEND XRC_RECV",
	}
	got := map[PortSpace]string{}
	for ps := range want {
		s := ""
		for _, typ := range types {
			if ps.Takes(typ) {
				s += " " + typ.String()
			}
		}
		got[ps] = s[1:]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected QP types per port space (-want +got):\n%s", diff)
	}
}

// TestXRCIDs: an XRC_SEND ID asks the kernel for one (CREATE_ID's
// qp_type 9), an XRC_RECV listener for 10, and the listener's connect
// requests come as XRC_RECV IDs; the accept carries the private data
// (rdma_xserver's SRQ number) and no SRQ flag.
func TestXRCIDs(t *testing.T) {
	ch, k := fakeChannel(t)
	cli, err := ch.CreateIDType(PortSpaceIB, verbs.QPTypeXRCSend)
	if err != nil {
		t.Fatal(err)
	}
	in := k.last(t, cmdCreateID)
	l, err := ch.CreateIDType(PortSpaceIB, verbs.QPTypeXRCRecv)
	if err != nil {
		t.Fatal(err)
	}
	in2 := k.last(t, cmdCreateID)
	got := []any{PortSpace(le.Uint16(in[16:])), in[18], cli.QPType(), PortSpace(le.Uint16(in2[16:])), in2[18], l.QPType()}
	want := []any{PortSpaceIB, uint8(9), verbs.QPTypeXRCSend, PortSpaceIB, uint8(10), verbs.QPTypeXRCRecv}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected CREATE_IDs (-want +got):\n%s", diff)
	}
	k.setQuery(0x1, 1, dstAddr, srcAddr)
	if err := l.Bind(dstAddr); err != nil {
		t.Fatal(err)
	}
	if err := l.Listen(0); err != nil {
		t.Fatal(err)
	}
	k.push(l.uid, 901, EventConnectRequest, 0, connParamBytes(t, ConnParam{QPNum: 0x33}))
	ev, err := l.Await(testCtx(t), "rdma_get_request")
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID.QPType() != verbs.QPTypeXRCRecv || ev.ID.PortSpace() != PortSpaceIB {
		t.Errorf("connect request's ID: %s %s, want RDMA_PS_IB XRC_RECV", ev.ID.PortSpace(), ev.ID.QPType())
	}
	srqn := binary.BigEndian.AppendUint32(nil, 0xabcd)
	k.push(ev.ID.uid, ev.ID.handle, EventEstablished, 0, nil)
	if err := ev.ID.Accept(testCtx(t), ConnParam{PrivateData: srqn}); err != nil {
		t.Fatal(err)
	}
	acc := k.last(t, cmdAccept)
	p := acc[8:]
	if diff := cmp.Diff(srqn, p[8:12]); diff != "" || p[8+maxPrivateData] != 4 || p[8+maxPrivateData+1] != 0 {
		t.Errorf("unexpected ACCEPT: private data %x (-want +got):\n%s; length %d, srq %d", p[8:12], diff, p[8+maxPrivateData], p[8+maxPrivateData+1])
	}
}

func TestCreateIDTypeMisuse(t *testing.T) {
	for _, c := range []struct {
		ps  PortSpace
		typ verbs.QPType
	}{{PortSpaceTCP, verbs.QPTypeXRCSend}, {PortSpaceTCP, verbs.QPTypeUD}, {PortSpaceUDP, verbs.QPTypeRC}, {PortSpaceIB, verbs.QPTypeUC}} {
		t.Run(fmt.Sprint(c.ps, c.typ), func(t *testing.T) {
			ch, k := fakeChannel(t)
			defer func() {
				want := fmt.Sprintf("rdmacm: CreateIDType: %s takes no %s QPs", c.ps, c.typ)
				if r := recover(); r != want {
					t.Errorf("panic %v, want %q", r, want)
				}
				if len(k.cmds) != 0 {
					t.Errorf("%d commands written", len(k.cmds))
				}
			}()
			ch.CreateIDType(c.ps, c.typ)
		})
	}
}

func TestNoXRC(t *testing.T) {
	cause := fmt.Errorf("rxe0 PD 1 (XRC_SEND, 1 send and 0 receive WRs): ibv_create_qp: %w", syscall.EOPNOTSUPP)
	rxe := verbs.Device{Name: "rxe0", Attr: verbs.Attr{DeviceCapFlags: 0x01223c76}}
	xrc := verbs.Device{Name: "mlx5_0", Attr: verbs.Attr{DeviceCapFlags: verbs.DeviceCapXRC}}
	for _, c := range []struct {
		name  string
		dev   verbs.Device
		typ   verbs.QPType
		want  string
		noXRC bool
	}{
		{"XRC_SEND without XRC", rxe, verbs.QPTypeXRCSend, "the device has no XRC domains: " + cause.Error(), true},
		{"XRC_RECV without XRC", rxe, verbs.QPTypeXRCRecv, "the device has no XRC domains: " + cause.Error(), true},
		{"XRC_SEND with XRC", xrc, verbs.QPTypeXRCSend, cause.Error(), false},
		{"RC", rxe, verbs.QPTypeRC, cause.Error(), false},
	} {
		err := noXRC(c.dev, c.typ, cause)
		got := []any{err.Error(), errors.Is(err, ErrNoXRC), errors.Is(err, syscall.EOPNOTSUPP)}
		if diff := cmp.Diff([]any{c.want, c.noXRC, true}, got); diff != "" {
			t.Errorf("%s: unexpected error (-want +got):\n%s", c.name, diff)
		}
	}
}
