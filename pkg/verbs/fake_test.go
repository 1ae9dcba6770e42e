package verbs

import (
	"syscall"
	"testing"
)

// fakeObj is a handle of the fake driver.
type fakeObj struct {
	kind string
	id   int
}

// fakeDriver stands in for libibverbs: it records what it is asked,
// answers from its fields, and fails the calls named in fail.
type fakeDriver struct {
	fail    map[string]error // driver method name -> the error it returns
	n       int
	port    Port
	gid     [16]byte
	caps    QPCaps // what createQP grants; zero: what was asked
	modify  []qpModify
	sends   [][]sendWork
	recvs   [][]recvWork
	wcs     []WorkCompletion // what pollCQ hands out
	event   handle           // what getCQEvent returns
	acked   int
	devices []string
}

// useFake installs a fake driver for the test.
func useFake(t *testing.T) *fakeDriver {
	t.Helper()
	f := &fakeDriver{fail: map[string]error{}, devices: []string{"mlx5_0", "rxe0"},
		port: Port{State: 4, ActiveMTU: 3, LinkLayer: LinkLayerEthernet}, gid: [16]byte{0: 0xfe, 1: 0x80, 15: 1}}
	old := drv
	drv = f
	t.Cleanup(func() { drv = old })
	return f
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

func (f *fakeDriver) closeDevice(handle) error { return f.fail["closeDevice"] }

func (f *fakeDriver) queryPort(_ handle, port int) (Port, error) {
	if err := f.fail["queryPort"]; err != nil {
		return Port{}, err
	}
	return f.port, nil
}

func (f *fakeDriver) queryGID(handle, int, int) ([16]byte, error) {
	return f.gid, f.fail["queryGID"]
}

func (f *fakeDriver) allocPD(handle) (handle, error) {
	if err := f.fail["allocPD"]; err != nil {
		return nil, err
	}
	return f.obj("pd"), nil
}

func (f *fakeDriver) deallocPD(handle) error { return f.fail["deallocPD"] }

func (f *fakeDriver) mmap(n int) ([]byte, error) {
	if err := f.fail["mmap"]; err != nil {
		return nil, err
	}
	return make([]byte, n), nil
}

func (f *fakeDriver) munmap([]byte) error { return f.fail["munmap"] }

func (f *fakeDriver) regMR(handle, []byte, Access) (handle, uint32, uint32, error) {
	if err := f.fail["regMR"]; err != nil {
		return nil, 0, 0, err
	}
	return f.obj("mr"), 0x100, 0x200, nil
}

func (f *fakeDriver) deregMR(handle) error { return f.fail["deregMR"] }

func (f *fakeDriver) createCompChannel(handle) (handle, error) {
	if err := f.fail["createCompChannel"]; err != nil {
		return nil, err
	}
	return f.obj("channel"), nil
}

func (f *fakeDriver) destroyCompChannel(handle) error { return f.fail["destroyCompChannel"] }

func (f *fakeDriver) createCQ(handle, int, handle) (handle, error) {
	if err := f.fail["createCQ"]; err != nil {
		return nil, err
	}
	h := f.obj("cq")
	f.event = h
	return h, nil
}

func (f *fakeDriver) destroyCQ(handle) error            { return f.fail["destroyCQ"] }
func (f *fakeDriver) reqNotifyCQ(handle, bool) error    { return f.fail["reqNotifyCQ"] }
func (f *fakeDriver) ackCQEvents(_ handle, n int)       { f.acked += n }
func (f *fakeDriver) getCQEvent(handle) (handle, error) { return f.event, f.fail["getCQEvent"] }

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
	caps := f.caps
	if caps == (QPCaps{}) {
		caps = a.caps
	}
	return f.obj("qp"), 0x11, caps, nil
}

func (f *fakeDriver) modifyQP(_ handle, m qpModify) error {
	if err := f.fail["modifyQP"]; err != nil {
		return err
	}
	f.modify = append(f.modify, m)
	return nil
}

func (f *fakeDriver) destroyQP(handle) error { return f.fail["destroyQP"] }

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

// errnoENOMEM is the errno most failing calls return in the tests.
var errnoENOMEM error = syscall.ENOMEM
