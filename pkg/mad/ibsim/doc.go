// Package ibsim is a mad.Transport that speaks the ibsim simulator's socket
// protocol natively, the way libumad2sim.so (the LD_PRELOAD shim shipped
// with ibsim) does for the C tools, and presents the attach point as the
// same sysfs device the shim writes.
//
// # Protocol
//
// ibsim (0.10) listens on datagram sockets. In the default mode they are
// unix sockets in the abstract namespace named after a base name
// (IBSIM_SOCKNAME, default "sim"): "<base>:ctl" for control and
// "<base>:out<n>" for the data of client n, each name counting its
// terminating NUL (ss shows "@sim:ctl@"). A client binds "<base>:ctl<id>"
// and "<base>:in<id>", sends CONNECT with that id, and ibsim connects
// "<base>:out<n>" to "<base>:in<id>" and answers with the client number n
// (0-9; ibsim has 10 slots). When IBSIM_SERVER_NAME is set the sockets are
// UDP instead: control on IBSIM_SERVER_PORT (default 7070), data on
// port+n+1, and the id in CONNECT is the client's bound data port.
//
// Control messages (struct sim_ctl: magic 0xdeadbeef, client number, type,
// length, 64 data bytes) are in host byte order. Data frames are struct
// sim_request, 288 bytes: LIDs as a host-order 32-bit word holding the
// network-order 16-bit LID, QPNs and status in network order, the MAD length
// as a big-endian 64-bit word, then the 256-byte MAD. ibsim answers SMPs and
// PerfMgt MADs itself and forwards other MADs to the client attached at the
// destination (an SM, for SA queries). It rewrites TID bits 48-63 of every
// request with the client number, which it uses to route the response
// back; a request it drops comes back at once with status 110. ibsim
// trusts the client number in control requests: GET_* for a slot that never
// connected crashes it, so a Client sends nothing before CONNECT succeeds.
//
// Clients in one process are told apart by their id: the first uses the
// process ID as the shim does, later ones add a counter above bit 22, past
// any PID, so their socket names never collide with a shim's.
//
// # Attach point
//
// SIM_HOST names the node to attach to, by ibsim node ID or, failing that,
// by node description; empty means ibsim's default port (the first port of
// the net file). ibsim refuses unknown names, so Dial fails on them. When
// the name matched a node description, ibsim reports the node's ID instead;
// that is not an error: AttachInfo keeps both names and
// AttachInfo.MatchedByDescription tells the caller, who may warn.
//
// # Closing
//
// A client that exits without DISCONNECT keeps its ibsim slot until ibsim
// restarts. Close sends DISCONNECT; it is idempotent and safe to call from
// a signal handler's goroutine while Recv blocks, which it unblocks.
package ibsim
