//go:build cgo && !noverbs

package verbs

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

// sglCaps are queues of three SGEs each way.
var sglCaps = QPCaps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 3, MaxRecvSGE: 3}

// TestIntegrationSGLSendRecv gathers a SEND from three pieces of the
// client's MR and scatters it over two of the server's: the bytes arrive
// in order.
func TestIntegrationSGLSendRecv(t *testing.T) {
	ctx := integrationContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 4096, mrAccess: AccessLocalWrite, caps: sglCaps})
	Pattern(7).Fill(client.mr.Bytes())
	src := client.mr.Bytes()
	err := server.qp.PostRecv(RecvWR{ID: 1, SGL: []SGE{{MR: server.mr, Offset: 2048, Length: 100}, {MR: server.mr, Offset: 3000, Length: 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	gather := []SGE{{MR: client.mr, Offset: 0, Length: 10}, {MR: client.mr, Offset: 500, Length: 90}, {MR: client.mr, Offset: 1000, Length: 300}}
	if err := client.qp.PostSend(SendWR{ID: 2, Op: OpSend, SGL: gather, Signaled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.next(t); err != nil {
		t.Fatal(err)
	}
	wc, err := server.next(t)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, e := range gather {
		want = append(want, src[e.Offset:e.Offset+e.Length]...)
	}
	if wc.ByteLen != uint32(len(want)) {
		t.Errorf("received %d bytes, want %d", wc.ByteLen, len(want))
	}
	dst := server.mr.Bytes()
	got := append(append([]byte(nil), dst[2048:2148]...), dst[3000:3000+len(want)-100]...)
	if !bytes.Equal(got, want) {
		t.Errorf("the scattered bytes differ from the gathered ones")
	}
}

// TestIntegrationSGLWriteRead writes from two pieces into the server's
// MR, then reads it back into three: RDMA WRITE gathers, RDMA READ
// scatters.
func TestIntegrationSGLWriteRead(t *testing.T) {
	ctx := integrationContext(t)
	access := AccessLocalWrite | AccessRemoteWrite | AccessRemoteRead
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 4096, mrAccess: access, qpAccess: access, caps: sglCaps})
	Pattern(9).Fill(client.mr.Bytes()[:1024])
	src := append([]byte(nil), client.mr.Bytes()[:1024]...)
	err := client.qp.PostSend(SendWR{ID: 1, Op: OpRDMAWrite, Signaled: true, RemoteAddr: server.mr.Addr() + 100, RKey: server.mr.RKey(),
		SGL: []SGE{{MR: client.mr, Offset: 0, Length: 512}, {MR: client.mr, Offset: 512, Length: 512}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.next(t); err != nil {
		t.Fatal(err)
	}
	if got := server.mr.Bytes()[100:1124]; !bytes.Equal(got, src) {
		t.Errorf("the written bytes differ from the gathered ones")
	}
	err = client.qp.PostSend(SendWR{ID: 2, Op: OpRDMARead, Signaled: true, RemoteAddr: server.mr.Addr() + 100, RKey: server.mr.RKey(),
		SGL: []SGE{{MR: client.mr, Offset: 3000, Length: 24}, {MR: client.mr, Offset: 2048, Length: 900}, {MR: client.mr, Offset: 1500, Length: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	if wc, err := client.next(t); err != nil || wc.Opcode != WCRDMARead {
		t.Fatalf("read completion %+v, error %v", wc, err)
	}
	b := client.mr.Bytes()
	got := append(append(append([]byte(nil), b[3000:3024]...), b[2048:2948]...), b[1500:1600]...)
	if !bytes.Equal(got, src) {
		t.Errorf("the read bytes differ from the written ones")
	}
}

// TestIntegrationSGLLimits: a QP with more SGEs than the device's max_sge
// is refused with ErrTooManySGEs (pyverbs' test_create_*_with_illegal_caps
// _max_send_sge and _max_recv_sge), and so is a request with more SGEs
// than its QP was made with.
func TestIntegrationSGLLimits(t *testing.T) {
	ctx := integrationContext(t)
	a, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 64, mrAccess: AccessLocalWrite, caps: sglCaps})
	for _, caps := range []QPCaps{{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: a.MaxSGE + 1}, {MaxSendWR: 1, MaxRecvWR: 1, MaxRecvSGE: a.MaxSGE + 1}} {
		qp, err := client.pd.CreateQP(QPConfig{SendCQ: client.cq, RecvCQ: client.cq, Caps: caps})
		if err == nil {
			_ = qp.Close()
		}
		if !errors.Is(err, ErrTooManySGEs) || !errors.Is(err, syscall.EINVAL) {
			t.Errorf("CreateQP with %+v (max_sge %d): error %v, want ErrTooManySGEs", caps, a.MaxSGE, err)
		}
	}
	// One SGE more than each queue was granted.
	sgl := func(mr *MR, n int) []SGE {
		l := make([]SGE, n+1)
		for i := range l {
			l[i] = SGE{MR: mr, Offset: i, Length: 1}
		}
		return l
	}
	if err := client.qp.PostSend(SendWR{Op: OpSend, SGL: sgl(client.mr, client.qp.Caps().MaxSendSGE)}); !errors.Is(err, ErrTooManySGEs) {
		t.Errorf("PostSend of one SGE more than the QP's %d: error %v, want ErrTooManySGEs", client.qp.Caps().MaxSendSGE, err)
	}
	if err := server.qp.PostRecv(RecvWR{SGL: sgl(server.mr, server.qp.Caps().MaxRecvSGE)}); !errors.Is(err, ErrTooManySGEs) {
		t.Errorf("PostRecv of one SGE more than the QP's %d: error %v, want ErrTooManySGEs", server.qp.Caps().MaxRecvSGE, err)
	}
}
