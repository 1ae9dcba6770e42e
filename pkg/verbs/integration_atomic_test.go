//go:build cgo && !noverbs

package verbs

import (
	"encoding/binary"
	"errors"
	"testing"
)

// The atomics' tests are rdma-core's tests/test_atomic.py: two RC QPs on
// one device, each side in turn the requester, the values one byte
// repeated eight times (so that they read the same in either byte order).

const atomicAccess = AccessLocalWrite | AccessRemoteAtomic

// atomicContext opens the device, skipping the test when it has no
// atomics (as AtomicTest.setUp does).
func atomicContext(t *testing.T) *Context {
	ctx := integrationContext(t)
	a, err := ctx.QueryDevice()
	if err != nil {
		t.Fatal(err)
	}
	if a.AtomicCap == AtomicNone {
		t.Skipf("%s: atomic_cap is ATOMIC_NONE", ctx.Name())
	}
	return ctx
}

// repeated is v's low byte eight times, pyverbs' int8b_from_int.
func repeated(v uint8) uint64 { return uint64(v) * 0x0101010101010101 }

// atomicTraffic is pyverbs' atomic_traffic with one request per turn:
// iters times, the client then the server writes sender into its MR's
// first 8 bytes, the peer writes receiver into its own, and the sender
// runs op with sender as the compare or add operand and swap; the
// sender's MR then holds the receiver's old value and the receiver's what
// op made of it.
func atomicTraffic(t *testing.T, client, server *loopSide, op Opcode, receiver, sender, swap uint8) {
	t.Helper()
	for i := range 10 {
		for _, p := range [][2]*loopSide{{client, server}, {server, client}} {
			from, to := p[0], p[1]
			binary.LittleEndian.PutUint64(from.mr.Bytes(), repeated(sender))
			binary.LittleEndian.PutUint64(to.mr.Bytes(), repeated(receiver))
			err := from.qp.PostSend(SendWR{ID: uint64(i), Op: op, MR: from.mr, Length: 8, Signaled: true,
				RemoteAddr: to.mr.Addr(), RKey: to.mr.RKey(), CompareAdd: repeated(sender), Swap: repeated(swap)})
			if err != nil {
				t.Fatal(err)
			}
			wc, err := from.next(t)
			if err != nil {
				t.Fatal(err)
			}
			wantOp := map[Opcode]WCOpcode{OpAtomicCmpAndSwp: WCCompSwap, OpAtomicFetchAndAdd: WCFetchAdd}[op]
			if wc.Opcode != wantOp {
				t.Errorf("iteration %d: completion opcode %s, want %s", i, wc.Opcode, wantOp)
			}
			want := repeated(receiver) + repeated(sender)
			if op == OpAtomicCmpAndSwp {
				want = repeated(receiver)
				if receiver == sender {
					want = repeated(swap)
				}
			}
			if got := binary.LittleEndian.Uint64(from.mr.Bytes()); got != repeated(receiver) {
				t.Errorf("iteration %d: the sender fetched %#x, want %#x", i, got, repeated(receiver))
			}
			if got := binary.LittleEndian.Uint64(to.mr.Bytes()); got != want {
				t.Errorf("iteration %d: the receiver holds %#x, want %#x", i, got, want)
			}
		}
	}
}

// TestIntegrationAtomicCmpAndSwap is test_atomic_cmp_and_swap: a compare
// that fails (1 against 2) leaves the value, one that matches swaps it.
func TestIntegrationAtomicCmpAndSwap(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 8, mrAccess: atomicAccess, qpAccess: atomicAccess})
	atomicTraffic(t, client, server, OpAtomicCmpAndSwp, 1, 2, 0)
	atomicTraffic(t, client, server, OpAtomicCmpAndSwp, 1, 1, 0)
}

// TestIntegrationAtomicFetchAndAdd is test_atomic_fetch_and_add.
func TestIntegrationAtomicFetchAndAdd(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 8, mrAccess: atomicAccess, qpAccess: atomicAccess})
	atomicTraffic(t, client, server, OpAtomicFetchAndAdd, 1, 2, 0)
}

// atomicFails runs one FETCH_AND_ADD from client to server's MR at
// offset off with rkey and checks that it completes with an error.
func atomicFails(t *testing.T, client, server *loopSide, off uint64, rkey uint32) {
	t.Helper()
	err := client.qp.PostSend(SendWR{Op: OpAtomicFetchAndAdd, MR: client.mr, Length: 8, Signaled: true,
		RemoteAddr: server.mr.Addr() + off, RKey: rkey, CompareAdd: 1})
	if err != nil {
		t.Fatal(err)
	}
	wc, err := client.next(t)
	var ce *CompletionError
	if !errors.As(err, &ce) {
		t.Fatalf("completion %+v with error %v, want a CompletionError", wc, err)
	}
	t.Logf("completed with %s, as expected", wc.Status)
}

// TestIntegrationAtomicInvalidQPAccess is test_atomic_invalid_qp_access:
// the responder's QP does not allow remote atomics.
func TestIntegrationAtomicInvalidQPAccess(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 8, mrAccess: atomicAccess, qpAccess: AccessLocalWrite})
	atomicFails(t, client, server, 0, server.mr.RKey())
}

// TestIntegrationAtomicInvalidMRAccess is test_atomic_invalid_mr_access:
// the responder's MR does not allow remote atomics.
func TestIntegrationAtomicInvalidMRAccess(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 8, mrAccess: AccessLocalWrite, qpAccess: atomicAccess})
	atomicFails(t, client, server, 0, server.mr.RKey())
}

// TestIntegrationAtomicInvalidRKey is test_atomic_invalid_rkey.
func TestIntegrationAtomicInvalidRKey(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 8, mrAccess: atomicAccess, qpAccess: atomicAccess})
	atomicFails(t, client, server, 0, server.mr.RKey()+1)
}

// TestIntegrationAtomicNonAlignedAddr is test_atomic_non_aligned_addr:
// PostSend refuses a remote address that is not 8-byte aligned before
// the device sees it; the QP stays usable.
func TestIntegrationAtomicNonAlignedAddr(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 9, mrAccess: atomicAccess, qpAccess: atomicAccess})
	err := client.qp.PostSend(SendWR{Op: OpAtomicFetchAndAdd, MR: client.mr, Length: 8, Signaled: true,
		RemoteAddr: server.mr.Addr() + 1, RKey: server.mr.RKey(), CompareAdd: 1})
	if !errors.Is(err, ErrUnalignedAtomic) {
		t.Fatalf("PostSend of an atomic to %#x: error %v, want ErrUnalignedAtomic", server.mr.Addr()+1, err)
	}
	atomicTraffic(t, client, server, OpAtomicFetchAndAdd, 1, 2, 0)
}

// TestIntegrationAtomicInvalidLKey is test_atomic_invalid_lkey: the
// requester's local SGE, where the fetched value lands, carries an lkey
// the device refuses for it, and the atomic completes with a local
// protection error. pyverbs forges the key (the MR's lkey plus one); an
// SGE here names its MR, so the key is a real MR's of the QP's PD,
// registered without local write: the device cannot write the fetched
// value through it. rxe looks up both the same way (the lkey's MR, then
// its key, PD and access) when the response comes back, so both fail at
// that step, after the responder did the atomic.
func TestIntegrationAtomicInvalidLKey(t *testing.T) {
	ctx := atomicContext(t)
	client, server := rcLoop(t, ctx, loopConfig{mrSize: 8, mrAccess: atomicAccess, qpAccess: atomicAccess})
	readOnly, err := client.pd.AllocMR(8, 0)
	ok(t, err)
	t.Cleanup(func() { closeOrFail(t, readOnly.Close) })
	err = client.qp.PostSend(SendWR{Op: OpAtomicFetchAndAdd, MR: readOnly, Length: 8, Signaled: true,
		RemoteAddr: server.mr.Addr(), RKey: server.mr.RKey(), CompareAdd: 1})
	ok(t, err)
	wc, err := client.next(t)
	var ce *CompletionError
	if !errors.As(err, &ce) || wc.Status != WCLocProtErr {
		t.Fatalf("completion %+v with error %v, want a CompletionError with status %s", wc, err, WCLocProtErr)
	}
}
