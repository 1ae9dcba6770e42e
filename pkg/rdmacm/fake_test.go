package rdmacm

import (
	"context"
	"encoding/binary"
	"net/netip"
	"sync"
	"syscall"
	"testing"
)

// fakeKernel is the CM device for the tests: it records each command's
// bytes, answers CREATE_ID with new handles, QUERY and INIT_QP_ATTR with
// what the test set, fails the commands the test names, and hands out
// the events the test queued (EAGAIN when none is).
type fakeKernel struct {
	mu      sync.Mutex
	cmds    []fakeCmd
	next    uint32
	fail    map[uint32]error
	query   []byte
	qpAttr  []byte
	events  [][]byte
	pushed  chan struct{}
	closed  bool
	mcastID uint32
	fd      int
}

type fakeCmd struct {
	op uint32
	in []byte
	// buf is what the command's buffer held when it was written (the
	// value of a SET_OPTION).
	buf []byte
}

// fakeFDs numbers the fake kernels' descriptors.
var fakeFDs = 10

func newFake() *fakeKernel {
	fakeFDs++
	return &fakeKernel{fd: fakeFDs, next: 100, fail: map[uint32]error{}, pushed: make(chan struct{}, 64), mcastID: 500}
}

// fakeChannel is a channel on a new fake kernel.
func fakeChannel(t *testing.T) (*EventChannel, *fakeKernel) {
	t.Helper()
	k := newFake()
	ch := newChannel(k)
	t.Cleanup(func() { ch.Close() })
	return ch, k
}

func (k *fakeKernel) command(op uint32, in []byte, respAt int, out []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.cmds = append(k.cmds, fakeCmd{op: op, in: append([]byte(nil), in...), buf: append([]byte(nil), out...)})
	if err := k.fail[op]; err != nil {
		return err
	}
	switch op {
	case cmdCreateID:
		k.next++
		le.PutUint32(out, k.next)
	case cmdJoinMcast:
		k.mcastID++
		le.PutUint32(out, k.mcastID)
	case cmdQuery:
		copy(out, k.query)
	case cmdInitQPAttr:
		copy(out, k.qpAttr)
	case cmdGetEvent:
		if len(k.events) == 0 {
			return syscall.EAGAIN
		}
		copy(out, k.events[0])
		k.events = k.events[1:]
	}
	return nil
}

func (k *fakeKernel) wait(ctx context.Context) error {
	for {
		k.mu.Lock()
		n := len(k.events)
		k.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-k.pushed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (k *fakeKernel) close() error { k.closed = true; return nil }

// file is a made-up descriptor: the kernel's MIGRATE_ID names it.
func (k *fakeKernel) file() int { return k.fd }

// push queues an event of type t for the ID of kernel handle id with
// uid, status, and param bytes (a conn or UD param, may be nil).
func (k *fakeKernel) push(uid uint64, id uint32, t EventType, status int32, param []byte) {
	b := make([]byte, eventResp)
	le.PutUint64(b[0:], uid)
	le.PutUint32(b[8:], id)
	le.PutUint32(b[12:], uint32(t))
	le.PutUint32(b[16:], uint32(status))
	copy(b[20:], param)
	k.mu.Lock()
	k.events = append(k.events, b)
	k.mu.Unlock()
	k.pushed <- struct{}{}
}

// last is the last command of op, or fails the test.
func (k *fakeKernel) last(t *testing.T, op uint32) []byte {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := len(k.cmds) - 1; i >= 0; i-- {
		if k.cmds[i].op == op {
			return k.cmds[i].in
		}
	}
	t.Fatalf("no command %d was written", op)
	return nil
}

// lastCmd is the last command of op with its buffer, or fails the test.
func (k *fakeKernel) lastCmd(t *testing.T, op uint32) fakeCmd {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for i := len(k.cmds) - 1; i >= 0; i-- {
		if k.cmds[i].op == op {
			return k.cmds[i]
		}
	}
	t.Fatalf("no command %d was written", op)
	return fakeCmd{}
}

// setQuery makes QUERY answer with device guid, port and the addresses.
func (k *fakeKernel) setQuery(guid uint64, port int, src, dst netip.AddrPort) {
	b := make([]byte, queryAddrResp)
	binary.BigEndian.PutUint64(b[0:], guid)
	b[8] = byte(port)
	le.PutUint16(b[10:], 0xffff)
	le.PutUint16(b[12:], uint16(putSockaddr(b[16:], src)))
	le.PutUint16(b[14:], uint16(putSockaddr(b[16+sockaddrStorage:], dst)))
	k.mu.Lock()
	k.query = b
	k.mu.Unlock()
}

// connParamBytes encodes p as an event's struct rdma_ucm_conn_param.
func connParamBytes(t *testing.T, p ConnParam) []byte {
	t.Helper()
	b := make([]byte, connParamSize)
	if err := putConnParam(b, p); err != nil {
		t.Fatal(err)
	}
	return b
}
