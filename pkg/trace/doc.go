// Package trace decodes RDMA packet captures and puts the messages they
// carry back together.
//
// It reads pcap and pcapng files (ReadCapture) whose frames are RoCEv2 (UDP
// port 4791 over IPv4 or IPv6), RoCEv1 (Ethertype 0x8915) or native
// InfiniBand (LINKTYPE_INFINIBAND, and the ERF records ibdump writes), behind
// Ethernet, Linux cooked capture (SLL, SLL2) or raw IP link layers. Decode
// turns one frame into a Packet: the LRH, GRH, BTH and the extended transport
// headers the opcode calls for (RDETH, DETH, XRCETH, RETH, AtomicETH, AETH,
// AtomicAckETH, ImmDt, IETH), the payload, and whether the invariant CRC
// (ICRC) the packet carries matches the one computed over its masked
// headers. MADs on QP0 and QP1 are decoded with pkg/mad, and
// Communication Management MADs into a CMMessage (DecodeCM): REQ, REP,
// RTU, REJ, MRA, DREQ, DREP, SIDR and LAP/APR, with rdma_cm's IP header
// and RPC-over-RDMA's connection private data when present.
//
// A Reassembler takes the decoded packets in capture order and, per queue
// pair and direction, orders them by PSN (24 bits, wrapping) into messages:
// SEND, RDMA WRITE and RDMA READ (the request matched with its responses,
// which come the other way), atomics and UD datagrams. Lost, duplicated,
// retransmitted and reordered packets, NAKs and bad ICRCs are reported as
// events and on the messages they touch, never hidden. The CM messages
// (and iWARP's MPA Request and Reply, DecodeMPAStart) make
// Result.Connections, and each message and queue pair names the
// connection that set its QP up.
//
// Encode builds packets the other way round (with a correct or a
// deliberately wrong ICRC) and CaptureWriter writes pcap or pcapng files, so
// tests can make any capture they need.
package trace
