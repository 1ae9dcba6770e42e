// Package perftest is the exchange perftest's programs (ib_write_bw and
// the rest of Debian's perftest 4.5) make over rdma_cm (-R, -z): once the
// exchange's RC connection is up, the two sides trade fixed-layout
// messages, each one SEND into a receive of DestSize bytes, the client
// first (ctx_xchg_data_rdma, ctx_hand_shake in perftest_communication.c).
// In write_bw.c's order:
//
//	version        16 bytes, a NUL-terminated version number ("6.06")
//	cycle buffer   4 bytes big-endian (the page size)
//	cache line     4 bytes big-endian
//	MTU            2 bytes: the port's enum ibv_mtu in decimal and a NUL
//	dest           56 bytes (struct pingpong_dest, big-endian fields), as
//	               the handshakes: zero before and after the connection of
//	               the data QP (-R), then the side's QP and buffer three
//	               times, then once to start the run
//	report         size, iterations (8 bytes each), peak, average and
//	               message rate (IEEE doubles), big-endian, each its own
//	               message
//	dest           once to close
//
// Dest, the version and MTU messages, the integer messages and Report
// encode and decode each of them; a message of the wrong size is a
// *SizeError. ibtool's rdma_bw speaks it, so either side can be perftest.
package perftest
