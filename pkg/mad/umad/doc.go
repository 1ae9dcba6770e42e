// Package umad is a mad.Transport over the kernel's user MAD interface, the
// character device /dev/infiniband/umadN that ib_umad creates for each port
// of each RDMA device. It speaks the same ABI as libibumad, written in Go on
// the raw system calls.
//
// # Device and ABI
//
// Open finds umadN for a device and port through sysfs
// (class/infiniband_mad), checks that the kernel speaks user MAD ABI 5, opens
// the device read-write and non-blocking, and switches the file to the
// P_Key-index frame layout (IB_USER_MAD_ENABLE_PKEY) before anything else.
//
// Every read and write moves one frame: a 64-byte struct ib_user_mad_hdr
// (agent id, status, timeout and retries, length, then the address: QPN,
// Q_Key, LID, SL, path bits, GRH fields and P_Key index) followed by the
// MAD. The address fields are in network byte order; the agent id, status,
// timeout, retries, length and P_Key index are in host order.
//
// # Agents
//
// The kernel delivers MADs to agents registered on the file
// (IB_USER_MAD_REGISTER_AGENT) per management class and class version,
// subnet management classes on QP0 and all others on QP1. An agent with an
// empty method mask is a client: it sends requests and receives only their
// responses. Options.Agents registers agents when the port opens, servers
// among them (a method mask, to receive requests); Send registers a client
// agent for any other class and version on first use. Close unregisters
// them all.
//
// # Transactions
//
// The kernel keeps the low 32 bits of a request's TID and puts its agent's
// own value in the upper 32, so responses match on uint32(TID) as
// mad.Transport requires. Send passes the packet's timeout to the kernel
// with no retries (the transactor retries itself); when the timeout passes
// without a response, Recv returns the request's first 24 bytes (the common
// MAD header, the TID in it) with Status ETIMEDOUT.
//
// # Concurrency
//
// Send may run on several goroutines and alongside Recv, whose calls are
// serialized. Recv waits in poll(2) on the device and an eventfd, which a
// cancelled context or Close signals, so both end a blocked Recv at once.
// All system calls go through the Sys interface, which tests replace.
package umad
