package verbs

import (
	"fmt"
	"unsafe"
)

// PD is a protection domain (struct ibv_pd): MRs and QPs made from one PD
// work together.
type PD struct {
	ctx      *Context
	h        handle
	id       int
	closed   bool
	children int // MRs and QPs not yet closed
}

// AllocPD allocates a protection domain.
func (c *Context) AllocPD() (*PD, error) {
	c.use("AllocPD")
	h, err := drv.allocPD(c.h)
	if err != nil {
		return nil, verbError("ibv_alloc_pd", c.name, err)
	}
	return &PD{ctx: c, h: h, id: c.adopt()}, nil
}

// String names the PD in messages.
func (pd *PD) String() string { return fmt.Sprintf("%s PD %d", pd.ctx.name, pd.id) }

func (pd *PD) use(what string) {
	if pd.closed {
		panic(fmt.Sprintf("verbs: %s on closed %s", what, pd))
	}
}

// Close deallocates the PD. Closing it again does nothing and returns
// nil; closing it while an MR or QP made from it is open panics.
func (pd *PD) Close() error {
	if pd.closed {
		return nil
	}
	if pd.children > 0 {
		panic(fmt.Sprintf("verbs: Close of %s with %d MRs and QPs still open", pd, pd.children))
	}
	if err := drv.deallocPD(pd.h); err != nil {
		return verbError("ibv_dealloc_pd", pd.String(), err)
	}
	pd.closed = true
	pd.ctx.release()
	return nil
}

// Buffer is memory outside the Go heap (an anonymous mmap) that an MR can
// register: the device reads and writes it while Go code runs, which
// cgo's rules forbid for Go memory.
type Buffer struct {
	b     []byte
	freed bool
	regs  int // MRs registered on it and not yet closed
}

// AllocBuffer maps n bytes of zeroed, page-aligned memory.
func AllocBuffer(n int) (*Buffer, error) {
	if n <= 0 {
		panic(fmt.Sprintf("verbs: AllocBuffer(%d): want a positive size", n))
	}
	b, err := drv.mmap(n)
	if err != nil {
		return nil, verbError("mmap", fmt.Sprintf("buffer of %d bytes", n), err)
	}
	return &Buffer{b: b}, nil
}

// Bytes is the buffer's memory. It stays valid until Free.
func (b *Buffer) Bytes() []byte {
	b.use("Bytes")
	return b.b
}

// Addr is the buffer's virtual address, what a peer writes to.
func (b *Buffer) Addr() uint64 {
	b.use("Addr")
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b.b))))
}

func (b *Buffer) use(what string) {
	if b.freed {
		panic(fmt.Sprintf("verbs: %s on freed buffer of %d bytes", what, len(b.b)))
	}
}

// Free unmaps the buffer. Freeing it again does nothing and returns nil;
// freeing it while an MR registers it panics.
func (b *Buffer) Free() error {
	if b.freed {
		return nil
	}
	if b.regs > 0 {
		panic(fmt.Sprintf("verbs: Free of a buffer of %d bytes still registered in %d MRs", len(b.b), b.regs))
	}
	if err := drv.munmap(b.b); err != nil {
		return verbError("munmap", fmt.Sprintf("buffer of %d bytes", len(b.b)), err)
	}
	b.freed = true
	return nil
}

// Access is a set of IBV_ACCESS_* permissions of an MR or a QP.
type Access uint32

// Access flags.
const (
	AccessLocalWrite   Access = 1 << 0
	AccessRemoteWrite  Access = 1 << 1
	AccessRemoteRead   Access = 1 << 2
	AccessRemoteAtomic Access = 1 << 3
	AccessOnDemand     Access = 1 << 6 // on-demand paging (ODP): the device faults pages in
)

// MR is a registered memory region (struct ibv_mr).
type MR struct {
	pd         *PD
	buf        *Buffer
	h          handle
	lkey, rkey uint32
	closed     bool
	freeBuf    bool // Close also frees buf (AllocMR)
}

// RegMR registers b for the access given. Registering a freed buffer, or
// with a closed PD, panics.
func (pd *PD) RegMR(b *Buffer, access Access) (*MR, error) {
	pd.use("RegMR")
	b.use("RegMR")
	h, lkey, rkey, err := drv.regMR(pd.h, b.b, access)
	if err != nil {
		return nil, verbError("ibv_reg_mr", fmt.Sprintf("%s (%d bytes)", pd, len(b.b)), err)
	}
	b.regs++
	pd.children++
	return &MR{pd: pd, buf: b, h: h, lkey: lkey, rkey: rkey}, nil
}

// AllocMR maps n bytes (AllocBuffer) and registers them; Close
// deregisters and frees them.
func (pd *PD) AllocMR(n int, access Access) (*MR, error) {
	pd.use("AllocMR")
	b, err := AllocBuffer(n)
	if err != nil {
		return nil, err
	}
	mr, err := pd.RegMR(b, access)
	if err != nil {
		_ = b.Free()
		return nil, err
	}
	mr.freeBuf = true
	return mr, nil
}

// String names the MR in messages.
func (mr *MR) String() string {
	return fmt.Sprintf("%s MR lkey %#x (%d bytes)", mr.pd, mr.lkey, len(mr.buf.b))
}

func (mr *MR) use(what string) {
	if mr.closed {
		panic(fmt.Sprintf("verbs: %s on closed %s", what, mr))
	}
}

// LKey is the key local work requests name the MR by.
func (mr *MR) LKey() uint32 { mr.use("LKey"); return mr.lkey }

// RKey is the key a peer's RDMA operations name the MR by.
func (mr *MR) RKey() uint32 { mr.use("RKey"); return mr.rkey }

// Addr is the address of the MR's first byte.
func (mr *MR) Addr() uint64 { mr.use("Addr"); return mr.buf.Addr() }

// Len is the MR's size in bytes.
func (mr *MR) Len() int { return len(mr.buf.b) }

// Bytes is the registered memory.
func (mr *MR) Bytes() []byte { mr.use("Bytes"); return mr.buf.b }

// Close deregisters the MR (and frees its memory when AllocMR made it).
// Closing it again does nothing and returns nil.
func (mr *MR) Close() error {
	if mr.closed {
		return nil
	}
	if err := drv.deregMR(mr.h); err != nil {
		return verbError("ibv_dereg_mr", mr.String(), err)
	}
	mr.closed = true
	mr.buf.regs--
	mr.pd.children--
	if mr.freeBuf {
		return mr.buf.Free()
	}
	return nil
}

// span checks that [off, off+n) lies in the MR and returns its address; a
// range outside is a bug in the caller.
func (mr *MR) span(what string, off, n int) uint64 {
	mr.use(what)
	if off < 0 || n < 0 || off+n > len(mr.buf.b) {
		panic(fmt.Sprintf("verbs: %s of bytes [%d, %d) outside %s", what, off, off+n, mr))
	}
	return mr.buf.Addr() + uint64(off)
}
