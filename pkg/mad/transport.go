package mad

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/ibtool/ibtool/pkg/rdma"
)

// QP1QKey is the well-known Q_Key of the general services interface (QP1).
const QP1QKey = 0x80010000

// ErrClosed is returned, wrapped, by a Transport's Send and Recv after Close.
var ErrClosed = errors.New("transport closed")

// ErrGone is wrapped by a Transport's Send and Recv errors after which no
// MAD can go or come again on it: the simulator has gone, the device was
// removed. A tool stops at the first such error instead of meeting it
// once per query.
var ErrGone = errors.New("the fabric port is gone")

// Transport moves MADs between this process and one local end port. It is
// what the kernel umad device (pkg/mad/umad) and the ibsim simulator
// (pkg/mad/ibsim) have in common, modeled on libibumad's ib_user_mad frame.
//
// A transport does not match responses to requests. The transactor above it
// runs one goroutine that calls Recv in a loop and routes each packet by its
// TID. To make that work every transport keeps this contract:
//
//   - The low 32 bits of a request's TID belong to the caller and come back
//     unchanged in the response. The upper 32 bits belong to the transport,
//     which may overwrite them on the way out (the kernel puts its agent's
//     hi_tid there, ibsim puts its client number in bits 48-63); the
//     response carries the overwritten value. Match on uint32(TID).
//   - A request that the transport knows got no response comes back from
//     Recv as a Packet with Status set (ETIMEDOUT) and the request's MAD,
//     so the waiter for that TID can fail or retry at once.
//   - Recv also returns unsolicited MADs (traps, requests to a server
//     agent) where the transport was set up to receive them.
//
// Send may be called from several goroutines at once and concurrently with
// Recv. Recv calls are serialized: use a single reader. Close may be called
// from any goroutine, any number of times; it makes a blocked Recv return an
// error wrapping ErrClosed.
//
// Neither call may outlive its context: a peer that stops reading (a frozen
// simulator) must not hold a Send, so a tool can always give up after its
// timeouts, or at once on SIGINT.
type Transport interface {
	// Send hands one MAD to the fabric, addressed by p.Addr, and returns
	// without waiting for a response. Send does not keep p. Where the
	// transport has to wait for room to send, it waits until ctx ends
	// (returning ctx.Err()) and, when p.Timeout is not zero, at most
	// p.Timeout: then it returns an error wrapping os.ErrDeadlineExceeded
	// and the MAD did not go.
	Send(ctx context.Context, p *Packet) error
	// Recv waits for the next MAD and stores it in p, reusing p.MAD's
	// storage. It returns ctx.Err() when ctx ends first.
	Recv(ctx context.Context, p *Packet) error
	// LocalPort names the end port the transport sends from.
	LocalPort() LocalPort
	// Close releases the transport and the fabric resources it holds.
	Close() error
}

// Packet is one MAD with its address, the counterpart of libibumad's
// struct ib_user_mad.
type Packet struct {
	// MAD is the whole MAD: Size bytes for an ordinary MAD. A transport
	// that reassembles RMPP itself may return more.
	MAD []byte
	// Addr is the remote end: the destination on Send, the source on Recv.
	Addr Address
	// Status is zero for a received MAD. ETIMEDOUT means the request in MAD
	// got no response (the kernel reports it after Timeout; ibsim at once
	// when it drops the packet).
	Status syscall.Errno
	// Timeout is how long the transport should wait for a response to a
	// request it sends. The kernel delivers a response only to a request
	// sent with a non-zero Timeout. It also bounds Send's wait for room to
	// send, the only use ibsim makes of it.
	Timeout time.Duration
}

// Address is the remote end of a MAD (ib_user_mad's addr).
type Address struct {
	// LID is the remote LID: rdma.PermissiveLID for a directed-route SMP
	// whose path starts here.
	LID rdma.LID
	// QPN is the remote queue pair: 0 for SMPs, 1 for the GSI, or a
	// redirected QP.
	QPN uint32
	// QKey is the remote Q_Key for GMPs: QP1QKey unless redirected.
	QKey uint32
	// SL is the service level.
	SL uint8
	// PathBits are the low LID bits chosen from the local port's LMC range.
	PathBits uint8
	// PKeyIndex indexes the local port's partition table.
	PKeyIndex uint16
	// HasGRH reports whether GRH is in use (the remote end is on another
	// subnet, or was addressed by GID).
	HasGRH bool
	// GRH holds the global route when HasGRH is set.
	GRH GRH
}

// GRH holds the global routing fields of an Address.
type GRH struct {
	GID          rdma.GID // remote GID
	GIDIndex     uint8    // index of the local source GID
	HopLimit     uint8
	TrafficClass uint8
	FlowLabel    uint32 // 20 bits
}

// LocalPort names the local end port a Transport is bound to.
type LocalPort struct {
	Device string // RDMA device name: "mlx5_0", "ibsim0"
	Port   uint8  // port number; 0 is a switch's management port
}
