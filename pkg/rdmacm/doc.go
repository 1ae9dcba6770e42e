// Package rdmacm is the RDMA connection manager (librdmacm's rdma_cm) in
// Go: connecting by IP address as real RDMA applications do, on
// InfiniBand, RoCE and iWARP alike. An EventChannel is an open
// /dev/infiniband/rdma_cm; on it, IDs (one end of a connection, a
// listener, or a UD endpoint) bind, resolve an address and a route,
// listen, connect with private data, accept, reject and disconnect, and
// UD IDs join and leave multicast groups. Every RDMA_CM_EVENT_* is
// decoded into an Event; an error event ends the call waiting for it
// with an *Error that names the operation, the address and the event and
// wraps the kernel's status as an errno.
//
// The package speaks the kernel's own interface, the ucma ABI (version
// 4: one write() per command of a fixed-layout struct), so it needs
// neither librdmacm nor its headers, and its tests run every event path
// on a fake kernel. The data path is pkg/verbs': ID.OpenDevice opens the
// verbs device an ID is bound to, and ID.CreateQP makes the ID's QP from
// a pkg/verbs PD and CQs and moves it through INIT, RTR and RTS with the
// attributes the CM gives (on iWARP the kernel moves it to RTS itself).
//
// The calls that wait for the kernel (ResolveAddr, ResolveRoute,
// Connect, Accept, JoinMulticast, Await) take a context that ends them.
// Several goroutines may wait on one channel, each for its own IDs.
package rdmacm
