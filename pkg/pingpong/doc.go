// Package pingpong is what rdma-core's ibverbs-utils pingpong programs
// (ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong)
// agree on outside the verbs: the out-of-band TCP exchange of each side's
// queue pair address (Dest, its 52-byte wire message and the "done"
// handshake, Client and Server), the GID as inet_ntop prints it
// (FormatGID), the numbers their options take (ParseNum, MTUBytes), and
// the report lines (Report). ibtool's pingpong tools speak the same
// exchange, so either side can be rdma-core's program.
package pingpong
