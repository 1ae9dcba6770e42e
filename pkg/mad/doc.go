// Package mad is the wire codec of InfiniBand management datagrams: the
// common MAD header, the directed-route SMP header, the RMPP and SA
// headers, the management class, method and status codes, paths (LID
// routed, directed route, global), and every attribute and SA record as a
// generated struct with its layout (MarshalBinary, UnmarshalBinary, field
// offsets and widths, SA component masks, enums). It also defines the
// Transport interface through which MADs reach the fabric.
//
// A MAD is 256 bytes, big endian, laid out as in the IBA specification
// (volume 1, chapter 13.4 for the common header, 14.2.1 for SMPs). The codecs
// here decode from and encode into caller-owned buffers and allocate nothing
// on the hot path.
//
// Transports (pkg/mad/umad for the kernel, pkg/mad/ibsim for the simulator,
// pkg/mad/madtest in memory) move whole MADs with their address; they do not
// interpret them beyond what the wire requires. Sending requests and
// matching their responses, timeouts, retries, RMPP and SA queries are
// pkg/madrpc's.
//
// Fields describes an attribute's layout as libibmad does (bit offset,
// width, label, format); Field.AppendValue and Format.Text give a value's
// text as libibmad prints it, and the enums' String methods use them.
// pkg/madtext lays fields out in infiniband-diags' dumps.
package mad
