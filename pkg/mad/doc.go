// Package mad holds InfiniBand management datagrams: the common MAD header,
// the directed-route SMP header, the management class, method and status
// codes, and the Transport interface through which MADs reach the fabric.
//
// A MAD is 256 bytes, big endian, laid out as in the IBA specification
// (volume 1, chapter 13.4 for the common header, 14.2.1 for SMPs). The codecs
// here decode from and encode into caller-owned buffers and allocate nothing
// on the hot path.
//
// Transports (pkg/mad/umad for the kernel, pkg/mad/ibsim for the simulator)
// move whole MADs with their address; they do not interpret them beyond what
// the wire requires. Matching responses to requests, timeouts, retries and
// RMPP belong to the transactor built on top of a Transport.
package mad
