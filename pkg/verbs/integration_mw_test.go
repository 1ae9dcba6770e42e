//go:build cgo && !noverbs

package verbs

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
)

// The memory window tests are rdma-core's tests/test_mr.py MWTest: two
// RC QPs, each side's MR (registered for window binds) behind a window
// the peer writes through.

const mwSize = 1024

// mwSide is a loop side with its window.
type mwSide struct {
	*loopSide
	mw *MW
}

// mwLoop connects two sides and gives each a window of typ, skipping the
// test where the device has no such windows.
func mwLoop(t *testing.T, typ MWType) (client, server *mwSide) {
	ctx := integrationContext(t)
	c, s := rcLoop(t, ctx, loopConfig{mrSize: mwSize, mrAccess: AccessLocalWrite | AccessMWBind, qpAccess: AccessLocalWrite | AccessRemoteWrite})
	client, server = &mwSide{loopSide: c}, &mwSide{loopSide: s}
	for _, p := range []*mwSide{client, server} {
		mw, err := p.pd.AllocMW(typ)
		if errors.Is(err, syscall.EOPNOTSUPP) {
			t.Skipf("%s: no %s memory windows: %v", ctx.Name(), typ, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		p.mw = mw
		t.Cleanup(func() {
			if !mw.closed {
				closeOrFail(t, mw.Close)
			}
		})
	}
	return client, server
}

// mwBind is what MWTest binds: the whole MR, for remote and local writes.
func (p *mwSide) mwBind() MWBind {
	return MWBind{MR: p.mr, Length: mwSize, Access: AccessRemoteWrite | AccessLocalWrite}
}

// bindType1 is bind_mw_type_1: each side binds its window with BindMW.
func bindType1(t *testing.T, sides ...*mwSide) {
	t.Helper()
	for _, p := range sides {
		if err := p.qp.BindMW(p.mw, 1, p.mwBind(), true); err != nil {
			t.Fatal(err)
		}
		wantCompletion(t, p.loopSide, WCBindMW)
	}
}

// bindType2 is bind_mw_type_2: each side posts a BIND_MW request.
func bindType2(t *testing.T, sides ...*mwSide) {
	t.Helper()
	for _, p := range sides {
		old := p.mw.RKey()
		if err := p.qp.PostSend(SendWR{ID: 2, Op: OpBindMW, MW: p.mw, Bind: p.mwBind(), Signaled: true}); err != nil {
			t.Fatal(err)
		}
		wantCompletion(t, p.loopSide, WCBindMW)
		if p.mw.RKey() != incRKey(old) {
			t.Errorf("after the bind the window's key is %#x, want %#x", p.mw.RKey(), incRKey(old))
		}
	}
}

// wantCompletion polls side's next completion and checks it succeeded
// with op.
func wantCompletion(t *testing.T, side *loopSide, op WCOpcode) WorkCompletion {
	t.Helper()
	wc, err := side.next(t)
	if err != nil {
		t.Fatal(err)
	}
	if wc.Opcode != op {
		t.Errorf("completion %s, want %s", wc.Opcode, op)
	}
	return wc
}

// mwWrite is rdma_traffic with RDMA WRITE: each side writes its MR's
// pattern to the peer through the peer's window, and the peer's MR then
// holds it. It returns the first completion error.
func mwWrite(t *testing.T, client, server *mwSide) error {
	t.Helper()
	for i, p := range [][2]*mwSide{{client, server}, {server, client}} {
		from, to := p[0], p[1]
		Pattern(uint64(i + 1)).Fill(from.mr.Bytes())
		err := from.qp.PostSend(SendWR{ID: 3, Op: OpRDMAWrite, MR: from.mr, Length: mwSize, Signaled: true,
			RemoteAddr: to.mr.Addr(), RKey: to.mw.RKey()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := from.next(t); err != nil {
			return err
		}
		if !bytes.Equal(from.mr.Bytes(), to.mr.Bytes()) {
			t.Errorf("the bytes written through %s differ", to.mw)
		}
	}
	return nil
}

// wantRemoteAccessError runs the writes and checks that the first fails
// with a remote access error, as test_mr.py's invalidation tests do.
func wantRemoteAccessError(t *testing.T, client, server *mwSide) {
	t.Helper()
	err := mwWrite(t, client, server)
	var ce *CompletionError
	if !errors.As(err, &ce) || ce.WC.Status != WCRemAccessErr {
		t.Fatalf("write through an invalidated window: %v, want a remote access error", err)
	}
}

// TestIntegrationMWType1 is test_mw_type1.
func TestIntegrationMWType1(t *testing.T) {
	client, server := mwLoop(t, MWType1)
	bindType1(t, server, client)
	if err := mwWrite(t, client, server); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationInvalidateMWType1 is test_invalidate_mw_type1: binding
// the windows again to zero bytes makes writes through them fail.
func TestIntegrationInvalidateMWType1(t *testing.T) {
	client, server := mwLoop(t, MWType1)
	bindType1(t, server, client)
	if err := mwWrite(t, client, server); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*mwSide{server, client} {
		if err := p.qp.BindMW(p.mw, 4, MWBind{MR: p.mr}, true); err != nil {
			t.Fatal(err)
		}
		wantCompletion(t, p.loopSide, WCBindMW)
	}
	wantRemoteAccessError(t, client, server)
}

// TestIntegrationMWType2 is test_mw_type2.
func TestIntegrationMWType2(t *testing.T) {
	client, server := mwLoop(t, MWType2)
	bindType2(t, server, client)
	if err := mwWrite(t, client, server); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationMWType2InvalidateLocal is test_mw_type2_invalidate_local:
// each side invalidates its own window with LOCAL_INV.
func TestIntegrationMWType2InvalidateLocal(t *testing.T) {
	client, server := mwLoop(t, MWType2)
	bindType2(t, server, client)
	if err := mwWrite(t, client, server); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*mwSide{client, server} {
		if err := p.qp.PostSend(SendWR{ID: 5, Op: OpLocalInv, InvalidateRKey: p.mw.RKey(), Signaled: true}); err != nil {
			t.Fatal(err)
		}
		wantCompletion(t, p.loopSide, WCLocalInv)
	}
	wantRemoteAccessError(t, client, server)
}

// TestIntegrationMWType2InvalidateRemote is
// test_mw_type2_invalidate_remote: each side's SEND_WITH_INV invalidates
// the peer's window as it arrives.
func TestIntegrationMWType2InvalidateRemote(t *testing.T) {
	client, server := mwLoop(t, MWType2)
	bindType2(t, server, client)
	if err := mwWrite(t, client, server); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*mwSide{client, server} {
		if err := p.qp.PostRecv(RecvWR{ID: 6, MR: p.mr, Length: mwSize}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range [][2]*mwSide{{client, server}, {server, client}} {
		from, to := p[0], p[1]
		if err := from.qp.PostSend(SendWR{ID: 7, Op: OpSendInv, InvalidateRKey: to.mw.RKey(), Signaled: true}); err != nil {
			t.Fatal(err)
		}
		wantCompletion(t, from.loopSide, WCSend)
		// test_mr.py checks only that the window is gone (below): rxe
		// (kernel 6.1) does not flag the receive IBV_WC_WITH_INV.
		wc := wantCompletion(t, to.loopSide, WCRecv)
		t.Logf("receive completion: invalidated %v, key %#x (the window's %#x)", wc.HasInv, wc.InvRKey, to.mw.RKey())
	}
	wantRemoteAccessError(t, client, server)
}

// TestIntegrationMWType2InvalidateDealloc is
// test_mw_type2_invalidate_dealloc: deallocated windows let no write in.
func TestIntegrationMWType2InvalidateDealloc(t *testing.T) {
	client, server := mwLoop(t, MWType2)
	bindType2(t, server, client)
	if err := mwWrite(t, client, server); err != nil {
		t.Fatal(err)
	}
	keys := map[*mwSide]uint32{client: client.mw.RKey(), server: server.mw.RKey()}
	for _, p := range []*mwSide{client, server} {
		if err := p.mw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	Pattern(3).Fill(client.mr.Bytes())
	err := client.qp.PostSend(SendWR{Op: OpRDMAWrite, MR: client.mr, Length: mwSize, Signaled: true, RemoteAddr: server.mr.Addr(), RKey: keys[server]})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.next(t)
	var ce *CompletionError
	if !errors.As(err, &ce) || ce.WC.Status != WCRemAccessErr {
		t.Fatalf("write through a deallocated window: %v, want a remote access error", err)
	}
}

// TestIntegrationRegMWWrongType is test_reg_mw_wrong_type: a window of
// type 3 is refused.
func TestIntegrationRegMWWrongType(t *testing.T) {
	ctx := integrationContext(t)
	pd, err := ctx.AllocPD()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeOrFail(t, pd.Close) })
	mw, err := pd.AllocMW(3)
	if err == nil {
		_ = mw.Close()
		t.Fatalf("%s made a memory window of type 3", ctx.Name())
	}
	t.Logf("type 3 refused: %v", err)
}
