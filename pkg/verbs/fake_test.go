package verbs

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// fakeObj is a handle of the fake driver.
type fakeObj struct {
	kind string
	id   int
}

// fakeDriver stands in for libibverbs: it records what it is asked,
// answers from its fields, and fails the calls named in fail.
type fakeDriver struct {
	fail map[string]error // driver method name -> the error it returns
	// released counts the calls that freed an object (deallocPD,
	// destroyQP, ...) and succeeded, by driver method.
	released map[string]int
	n        int
	port     Port
	gid      [16]byte
	// gids is the device's GID table as queryGIDEx and queryGIDTable
	// read it; pkey is every P_Key index's entry.
	gids    []GIDEntry
	pkey    uint16
	vector  int         // what the last createCQ got
	inOrder DataInOrder // what queryDataInOrder answers
	attr    Attr        // what queryDevice returns
	devAttr DeviceAttr  // queryDeviceLegacy's identity fields
	qpAttr  QPAttr      // what queryQP returns
	cqFlags WCFlags     // what the last createCQEx got
	cqe     int         // what cqEntries returns; resizeCQ sets it
	caps    QPCaps      // what createQP grants; zero: what was asked
	modify  []qpModify
	created []qpCreate // what createQP was asked
	mcasts  []fakeMcast
	sends   [][]sendWork
	sges    []streamSGE // the last Stream's split request
	recvs   [][]recvWork
	wcs     []WorkCompletion // what pollCQ hands out
	event   handle           // what getCQEvent returns
	acked   int
	devices []string
	// asyncEvents are what getAsyncEvent hands out.
	asyncEvents []AsyncEvent
	// badStatus, when set, is the status of the completion of the
	// first signalled request from badID on, in stream.
	badStatus WCStatus
	badID     int
}

// useFake installs a fake driver for the test.
func useFake(t *testing.T) *fakeDriver {
	t.Helper()
	f := &fakeDriver{fail: map[string]error{}, released: map[string]int{}, devices: []string{"mlx5_0", "rxe0"},
		port: Port{State: PortStateActive, ActiveMTU: 3, LinkLayer: LinkLayerEthernet}, gid: [16]byte{0: 0xfe, 1: 0x80, 15: 1},
		attr: Attr{MaxSGE: 32, MaxSRQSGE: 27, AtomicCap: AtomicHCA}}
	old := drv
	drv = f
	t.Cleanup(func() { drv = old })
	return f
}

// release is a call that frees an object: the error fail names, or
// nil, counted in released.
func (f *fakeDriver) release(verb string) error {
	if err := f.fail[verb]; err != nil {
		return err
	}
	f.released[verb]++
	return nil
}

func (f *fakeDriver) obj(kind string) *fakeObj {
	f.n++
	return &fakeObj{kind: kind, id: f.n}
}

func (f *fakeDriver) open(name string) (handle, string, error) {
	if err := f.fail["open"]; err != nil {
		return nil, "", err
	}
	for _, d := range f.devices {
		if name == "" || name == d {
			return f.obj("ctx"), d, nil
		}
	}
	return nil, "", ErrDeviceNotFound
}

func (f *fakeDriver) closeDevice(handle) error { return f.release("closeDevice") }

func (f *fakeDriver) queryPort(_ handle, port int) (Port, error) {
	if err := f.fail["queryPort"]; err != nil {
		return Port{}, err
	}
	return f.port, nil
}

func (f *fakeDriver) queryGID(handle, int, int) ([16]byte, error) {
	return f.gid, f.fail["queryGID"]
}

func (f *fakeDriver) queryGIDEx(_ handle, port, index int) (GIDEntry, error) {
	if err := f.fail["queryGIDEx"]; err != nil {
		return GIDEntry{}, err
	}
	for _, e := range f.gids {
		if e.Port == port && e.Index == index {
			return e, nil
		}
	}
	return GIDEntry{}, syscall.ENODATA
}

func (f *fakeDriver) queryGIDTable(_ handle, size int) ([]GIDEntry, error) {
	if err := f.fail["queryGIDTable"]; err != nil {
		return nil, err
	}
	if size < len(f.gids) {
		return nil, syscall.EINVAL
	}
	return append([]GIDEntry(nil), f.gids...), nil
}

func (f *fakeDriver) queryPKey(handle, int, int) (uint16, error) {
	return f.pkey, f.fail["queryPKey"]
}

func (f *fakeDriver) queryDevice(handle) (Attr, error) {
	if err := f.fail["queryDevice"]; err != nil {
		return Attr{}, err
	}
	return f.attr, nil
}

// queryDeviceLegacy is attr's fields of struct ibv_device_attr, with
// devAttr's identity.
func (f *fakeDriver) queryDeviceLegacy(handle) (DeviceAttr, error) {
	if err := f.fail["queryDeviceLegacy"]; err != nil {
		return DeviceAttr{}, err
	}
	a := f.devAttr
	a.Attr = legacyPart(f.attr)
	return a, nil
}

func (f *fakeDriver) asyncFD(handle) int { return 7 }

func (f *fakeDriver) waitAsync(handle, int) (bool, error) {
	return len(f.asyncEvents) > 0, f.fail["waitAsync"]
}

func (f *fakeDriver) getAsyncEvent(handle) (AsyncEvent, error) {
	if err := f.fail["getAsyncEvent"]; err != nil {
		return AsyncEvent{}, err
	}
	e := f.asyncEvents[0]
	f.asyncEvents = f.asyncEvents[1:]
	return e, nil
}

func (f *fakeDriver) allocPD(handle) (handle, error) {
	if err := f.fail["allocPD"]; err != nil {
		return nil, err
	}
	return f.obj("pd"), nil
}

func (f *fakeDriver) deallocPD(handle) error { return f.release("deallocPD") }

func (f *fakeDriver) mmap(n int) ([]byte, error) {
	if err := f.fail["mmap"]; err != nil {
		return nil, err
	}
	return make([]byte, n), nil
}

func (f *fakeDriver) munmap([]byte) error { return f.release("munmap") }

func (f *fakeDriver) regMR(handle, []byte, Access) (handle, uint32, uint32, error) {
	if err := f.fail["regMR"]; err != nil {
		return nil, 0, 0, err
	}
	return f.obj("mr"), 0x100, 0x200, nil
}

func (f *fakeDriver) deregMR(handle) error { return f.release("deregMR") }

func (f *fakeDriver) createCompChannel(handle) (handle, error) {
	if err := f.fail["createCompChannel"]; err != nil {
		return nil, err
	}
	return f.obj("channel"), nil
}

func (f *fakeDriver) destroyCompChannel(handle) error { return f.release("destroyCompChannel") }

func (f *fakeDriver) createCQ(_ handle, _ int, _ handle, vector int) (handle, error) {
	if err := f.fail["createCQ"]; err != nil {
		return nil, err
	}
	f.vector = vector
	h := f.obj("cq")
	f.event = h
	return h, nil
}

func (f *fakeDriver) createCQEx(ctx handle, cqe int, ch handle, flags WCFlags) (handle, error) {
	if err := f.fail["createCQEx"]; err != nil {
		return nil, err
	}
	f.cqFlags = flags
	return f.createCQ(ctx, cqe, ch, 0)
}

func (f *fakeDriver) destroyCQ(handle) error            { return f.release("destroyCQ") }
func (f *fakeDriver) reqNotifyCQ(handle, bool) error    { return f.fail["reqNotifyCQ"] }
func (f *fakeDriver) ackCQEvents(_ handle, n int)       { f.acked += n }
func (f *fakeDriver) getCQEvent(handle) (handle, error) { return f.event, f.fail["getCQEvent"] }

// waitChannel has an event when the fake has one to give.
func (f *fakeDriver) waitChannel(handle, int) (bool, error) {
	return f.event != nil, f.fail["waitChannel"]
}

func (f *fakeDriver) pollCQ(_ handle, wc []WorkCompletion) (int, error) {
	if err := f.fail["pollCQ"]; err != nil {
		return 0, err
	}
	n := copy(wc, f.wcs)
	f.wcs = f.wcs[n:]
	return n, nil
}

func (f *fakeDriver) createQP(_ handle, a qpCreate) (handle, uint32, QPCaps, error) {
	if err := f.fail["createQP"]; err != nil {
		return nil, 0, QPCaps{}, err
	}
	f.created = append(f.created, a)
	caps := f.caps
	if caps == (QPCaps{}) {
		caps = a.caps
	}
	return f.obj("qp"), 0x11, caps, nil
}

func (f *fakeDriver) attachMcast(_ handle, gid [16]byte, lid uint16) error {
	if err := f.fail["attachMcast"]; err != nil {
		return err
	}
	f.mcasts = append(f.mcasts, fakeMcast{gid, lid, true})
	return nil
}

func (f *fakeDriver) detachMcast(_ handle, gid [16]byte, lid uint16) error {
	if err := f.fail["detachMcast"]; err != nil {
		return err
	}
	f.mcasts = append(f.mcasts, fakeMcast{gid, lid, false})
	return nil
}

// fakeMcast is one attach (or detach) of a QP to a group.
type fakeMcast struct {
	GID    [16]byte
	LID    uint16
	Attach bool
}

func (f *fakeDriver) modifyQP(_ handle, m qpModify) error {
	if err := f.fail["modifyQP"]; err != nil {
		return err
	}
	f.modify = append(f.modify, m)
	return nil
}

func (f *fakeDriver) destroyQP(handle) error { return f.release("destroyQP") }

func (f *fakeDriver) queryDataInOrder(handle, Opcode) (DataInOrder, error) {
	return f.inOrder, f.fail["queryDataInOrder"]
}

func (f *fakeDriver) queryQP(handle) (QPAttr, error) {
	if err := f.fail["queryQP"]; err != nil {
		return QPAttr{}, err
	}
	return f.qpAttr, nil
}

func (f *fakeDriver) cqEntries(handle) int { return f.cqe }

func (f *fakeDriver) resizeCQ(_ handle, cqe int) error {
	if err := f.fail["resizeCQ"]; err != nil {
		return err
	}
	f.cqe = cqe + 1 // as a provider rounds
	return nil
}

func (f *fakeDriver) createAH(handle, AHAttr) (handle, error) {
	if err := f.fail["createAH"]; err != nil {
		return nil, err
	}
	return f.obj("ah"), nil
}

func (f *fakeDriver) destroyAH(handle) error { return f.release("destroyAH") }

func (f *fakeDriver) allocMW(handle, MWType) (handle, uint32, error) {
	if err := f.fail["allocMW"]; err != nil {
		return nil, 0, err
	}
	return f.obj("mw"), 0x300, nil
}

func (f *fakeDriver) deallocMW(handle) error { return f.release("deallocMW") }

// bindMW records the bind as a send of BIND_MW and gives the window the
// next key.
func (f *fakeDriver) bindMW(_, _ handle, id uint64, flags sendFlags, b mwBindWork) (uint32, error) {
	if err := f.fail["bindMW"]; err != nil {
		return 0, err
	}
	f.sends = append(f.sends, []sendWork{{id: id, op: OpBindMW, flags: flags, bind: b}})
	return 0x301, nil
}

func (f *fakeDriver) createSRQ(handle, int, int) (handle, error) {
	if err := f.fail["createSRQ"]; err != nil {
		return nil, err
	}
	return f.obj("srq"), nil
}

func (f *fakeDriver) destroySRQ(handle) error { return f.release("destroySRQ") }

func (f *fakeDriver) openXRCD(handle, int) (handle, error) {
	if err := f.fail["openXRCD"]; err != nil {
		return nil, err
	}
	return f.obj("xrcd"), nil
}

func (f *fakeDriver) closeXRCD(handle) error { return f.release("closeXRCD") }

func (f *fakeDriver) createXRCSRQ(_, _, _ handle, _, _ int) (handle, uint32, error) {
	if err := f.fail["createXRCSRQ"]; err != nil {
		return nil, 0, err
	}
	return f.obj("srq"), 0x42, nil
}

func (f *fakeDriver) postSRQRecv(_ handle, wrs []recvWork) error {
	if err := f.fail["postSRQRecv"]; err != nil {
		return err
	}
	f.recvs = append(f.recvs, append([]recvWork(nil), wrs...))
	return nil
}

func (f *fakeDriver) postSend(_ handle, wrs []sendWork) error {
	if err := f.fail["postSend"]; err != nil {
		return err
	}
	f.sends = append(f.sends, append([]sendWork(nil), wrs...))
	return nil
}

func (f *fakeDriver) postRecv(_ handle, wrs []recvWork) error {
	if err := f.fail["postRecv"]; err != nil {
		return err
	}
	f.recvs = append(f.recvs, append([]recvWork(nil), wrs...))
	return nil
}

// stream is the send loop on a clock that advances a millisecond per
// post: a signalled request completes at the next reap (with events, once
// the reap asked for and got a CQ event). fail["postSend"],
// fail["pollCQ"], fail["reqNotifyCQ"] and fail["getCQEvent"] fail those
// steps; badStatus fails a completion.
func (f *fakeDriver) stream(ctx context.Context, _, _, _ handle, r *streamRun) error {
	f.sges = r.sges
	var now time.Duration
	var pending []int
	post := func(signalled bool) error {
		if err := f.fail["postSend"]; err != nil {
			r.failed = "ibv_post_send"
			return err
		}
		w := r.wr
		w.id = uint64(r.posted)
		if signalled {
			w.flags |= sendSignaled
			pending = append(pending, r.posted)
		}
		f.sends = append(f.sends, []sendWork{w})
		if r.record {
			r.postedAt[r.posted] = now
		}
		r.posted++
		now += time.Millisecond
		return nil
	}
	reap := func() error {
		if err := f.fail["pollCQ"]; err != nil {
			r.failed = "ibv_poll_cq"
			return err
		}
		if r.events {
			if err := f.fail["reqNotifyCQ"]; err != nil {
				r.failed = "ibv_req_notify_cq"
				return err
			}
			if err := f.fail["getCQEvent"]; err != nil {
				r.failed = "ibv_get_cq_event"
				return err
			}
			f.acked++
		}
		for _, id := range pending {
			if f.badStatus != WCSuccess && id >= f.badID {
				r.wc = WorkCompletion{ID: uint64(id), Status: f.badStatus, Opcode: WCRDMAWrite, QPNum: 0x11}
				return errStreamCompletion
			}
			r.completed, r.last = id+1, now
			if r.record {
				r.completedAt[id] = now
				r.signaled = append(r.signaled, id)
			}
		}
		pending = pending[:0]
		return ctx.Err()
	}
	mod := r.signalEvery
	if r.count > 0 {
		for r.completed < r.count {
			for r.posted < r.count && r.posted-r.completed < r.depth {
				if err := post(r.posted%mod == mod-1 || r.posted == r.count-1); err != nil {
					return err
				}
			}
			if err := reap(); err != nil {
				return err
			}
		}
		return nil
	}
	c0, t0, sampling := 0, time.Duration(0), false
	for now < r.duration {
		if !sampling && now >= r.from && r.windowTime == 0 {
			c0, t0, sampling = r.completed, now, true
		}
		if sampling && now >= r.to {
			r.window, r.windowTime, sampling = r.completed-c0, now-t0, false
		}
		for r.posted-r.completed < r.depth {
			if err := post(r.posted%mod == mod-1); err != nil {
				return err
			}
		}
		if err := reap(); err != nil {
			return err
		}
	}
	if err := post(true); err != nil {
		return err
	}
	return reap()
}

// errnoENOMEM is the errno most failing calls return in the tests.
var errnoENOMEM error = syscall.ENOMEM
