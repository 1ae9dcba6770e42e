// Package verbs is RDMA through libibverbs (cgo): the device list, each
// device's attributes (ibv_query_device_ex, or the legacy
// ibv_query_device) and each port's as rdma-core's ibv_devinfo shows
// them (with each GID entry's type and network device, the whole GID
// table in one query, and P_Keys), and the objects a reliable-connected
// transfer needs: an open device (Context), protection domains (PD), memory regions (MR) over
// buffers outside the Go heap (Buffer, an anonymous mmap: the device
// reads and writes them while Go runs, which cgo forbids for Go memory),
// completion queues (CQ) with completion channels, on the completion
// vector asked for, and queue pairs (QP:
// RC, UC, UD, XRC send and receive) moved through INIT, RTR and RTS (with
// a GRH on RoCE), posting RDMA WRITE, WRITE with immediate, READ, SEND (to
// an address handle, AH, on UD; to a peer's XRC SRQ on XRC), the atomics
// (compare-and-swap, fetch-and-add) and receives, each over one MR range
// or a scatter/gather list (SGL) within the device's and the QP's limits,
// shared receive queues (SRQ, XRC ones in an XRC domain, XRCD), memory
// windows (MW, type 1 bound with QP.BindMW, type 2 with a BIND_MW request,
// invalidated locally or by the peer's SEND_WITH_INV), QP queries and
// moves to ERR and RESET and whether their data lands in order, CQ
// resizing, extended CQs (CreateCQEx: the
// completion fields asked for, timestamps where the device keeps them) and
// extended QPs (QPConfig.SendOps: posts through the ibv_wr_* ops),
// polling, and the device's async events (port up and down, ...; WaitPortDown
// waits for a port to go down, a *PortDownError). A
// bandwidth test's send loop (QP.Stream) runs whole in the driver, in one
// call, out of the Go scheduler's way. Pattern is the seeded data such a
// test writes and its receiver checks.
//
// The C calls sit behind an unexported driver interface in one file
// (driver_cgo.go, its C helpers in ibt_verbs.c); the state machine and the
// checks are Go on top of it, and the tests run them on a fake driver.
// Run-time failures are errors: *VerbError names the verb and the object
// and wraps the errno (ENODEV and EPERM match os.ErrNotExist and
// os.ErrPermission), a work request that failed is a *CompletionError.
// Misuse is a bug and panics with a message that says what was misused:
// posting on a QP that is not connected or was destroyed, using a closed
// PD, MR, CQ or context, closing an object that others still use, naming
// memory outside an MR. Closing is the one use a closed object allows:
// Close (and a Buffer's Free) of an object already closed does nothing
// and returns nil, as pyverbs' close does, so a deferred Close may follow
// an explicit one. A Close that failed leaves the object open.
//
// Built without cgo (CGO_ENABLED=0) or with the noverbs tag, Open and the
// device list return ErrNoVerbs, so the rest of ibtool builds and runs
// anywhere. The cgo build needs a C compiler but no libibverbs-dev: the
// part of libibverbs' ABI it uses is declared in ibt_verbs_abi.h (checked
// against <infiniband/verbs.h> by abi_test.go where that is installed).
// It does not link libibverbs: it loads libibverbs.so.1 with dlopen on
// the first device list (ibt_dl.h), so the tools that use no verbs start
// without loading it and libnl, and run where it is not installed; then
// Open and the device list return an error wrapping ErrNoLibibverbs.
package verbs
