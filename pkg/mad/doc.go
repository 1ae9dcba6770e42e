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
// the wire requires. Matching responses to requests, timeouts and retries
// belong to the Transactor built on top of a Transport: a Request names the
// class, method, attribute and Path (LID routed or directed route), and
// Transactor.Do returns the Response or a typed error (*TimeoutError,
// *StatusError, *ReplyError). pkg/mad/madtest is an in-memory Transport for
// tests.
//
// Fields describes an attribute's layout as libibmad does (bit offset,
// width, label, format), and AppendFields renders it in libibmad's dotted
// layout, so tools print what infiniband-diags prints.
package mad
