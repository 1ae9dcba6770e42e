//go:build !cgo || noverbs

package verbs

import "context"

func defaultDriver() driver { return noDriver{} }

// noDriver is the driver of a build without libibverbs: Open fails with
// ErrNoVerbs, so nothing else is ever called.
type noDriver struct{}

func (noDriver) open(string) (handle, string, error) { return nil, "", ErrNoVerbs }

func (noDriver) closeDevice(handle) error                             { return ErrNoVerbs }
func (noDriver) queryPort(handle, int) (Port, error)                  { return Port{}, ErrNoVerbs }
func (noDriver) queryGID(handle, int, int) ([16]byte, error)          { return [16]byte{}, ErrNoVerbs }
func (noDriver) queryGIDEx(handle, int, int) (GIDEntry, error)        { return GIDEntry{}, ErrNoVerbs }
func (noDriver) queryGIDTable(handle, int) ([]GIDEntry, error)        { return nil, ErrNoVerbs }
func (noDriver) queryDataInOrder(handle, Opcode) (DataInOrder, error) { return 0, ErrNoVerbs }
func (noDriver) queryPKey(handle, int, int) (uint16, error)           { return 0, ErrNoVerbs }
func (noDriver) queryDevice(handle) (Attr, error)                     { return Attr{}, ErrNoVerbs }
func (noDriver) queryDeviceLegacy(handle) (DeviceAttr, error)         { return DeviceAttr{}, ErrNoVerbs }
func (noDriver) allocPD(handle) (handle, error)                       { return nil, ErrNoVerbs }
func (noDriver) deallocPD(handle) error                               { return ErrNoVerbs }
func (noDriver) mmap(int) ([]byte, error)                             { return nil, ErrNoVerbs }
func (noDriver) munmap([]byte) error                                  { return ErrNoVerbs }
func (noDriver) regMR(handle, []byte, Access) (handle, uint32, uint32, error) {
	return nil, 0, 0, ErrNoVerbs
}
func (noDriver) deregMR(handle) error                                    { return ErrNoVerbs }
func (noDriver) createCompChannel(handle) (handle, error)                { return nil, ErrNoVerbs }
func (noDriver) destroyCompChannel(handle) error                         { return ErrNoVerbs }
func (noDriver) createCQ(handle, int, handle, int) (handle, error)       { return nil, ErrNoVerbs }
func (noDriver) createCQEx(handle, int, handle, WCFlags) (handle, error) { return nil, ErrNoVerbs }
func (noDriver) destroyCQ(handle) error                                  { return ErrNoVerbs }
func (noDriver) reqNotifyCQ(handle, bool) error                          { return ErrNoVerbs }
func (noDriver) getCQEvent(handle) (handle, error)                       { return nil, ErrNoVerbs }
func (noDriver) ackCQEvents(handle, int)                                 {}
func (noDriver) waitChannel(handle, int) (bool, error)                   { return false, ErrNoVerbs }
func (noDriver) pollCQ(handle, []WorkCompletion) (int, error)            { return 0, ErrNoVerbs }
func (noDriver) modifyQP(handle, qpModify) error                         { return ErrNoVerbs }
func (noDriver) queryQP(handle) (QPAttr, error)                          { return QPAttr{}, ErrNoVerbs }
func (noDriver) cqEntries(handle) int                                    { return 0 }
func (noDriver) resizeCQ(handle, int) error                              { return ErrNoVerbs }
func (noDriver) destroyQP(handle) error                                  { return ErrNoVerbs }
func (noDriver) postSend(handle, []sendWork) error                       { return ErrNoVerbs }
func (noDriver) postRecv(handle, []recvWork) error                       { return ErrNoVerbs }
func (noDriver) createQP(handle, qpCreate) (handle, uint32, QPCaps, error) {
	return nil, 0, QPCaps{}, ErrNoVerbs
}
func (noDriver) stream(context.Context, handle, handle, handle, *streamRun) error {
	return ErrNoVerbs
}

func (noDriver) asyncFD(handle) int                             { return -1 }
func (noDriver) waitAsync(handle, int) (bool, error)            { return false, ErrNoVerbs }
func (noDriver) getAsyncEvent(handle) (AsyncEvent, error)       { return AsyncEvent{}, ErrNoVerbs }
func (noDriver) createAH(handle, AHAttr) (handle, error)        { return nil, ErrNoVerbs }
func (noDriver) allocMW(handle, MWType) (handle, uint32, error) { return nil, 0, ErrNoVerbs }
func (noDriver) deallocMW(handle) error                         { return ErrNoVerbs }
func (noDriver) bindMW(_, _ handle, _ uint64, _ sendFlags, _ mwBindWork) (uint32, error) {
	return 0, ErrNoVerbs
}
func (noDriver) destroyAH(handle) error                     { return ErrNoVerbs }
func (noDriver) attachMcast(handle, [16]byte, uint16) error { return ErrNoVerbs }
func (noDriver) detachMcast(handle, [16]byte, uint16) error { return ErrNoVerbs }
func (noDriver) createSRQ(handle, int, int) (handle, error) { return nil, ErrNoVerbs }
func (noDriver) destroySRQ(handle) error                    { return ErrNoVerbs }
func (noDriver) postSRQRecv(handle, []recvWork) error       { return ErrNoVerbs }
func (noDriver) openXRCD(handle, int) (handle, error)       { return nil, ErrNoVerbs }
func (noDriver) closeXRCD(handle) error                     { return ErrNoVerbs }
func (noDriver) createXRCSRQ(_, _, _ handle, _, _ int) (handle, uint32, error) {
	return nil, 0, ErrNoVerbs
}
