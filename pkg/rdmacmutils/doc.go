// Package rdmacmutils is what the programs of rdma-core's rdmacm-utils
// (librdmacm's examples) agree on outside rdma_cm itself: the message
// rping sends to advertise a buffer (RpingInfo, struct rping_rdma_info
// of librdmacm/examples/rping.c: address, rkey and size in network
// order), and the XRC SRQ number rdma_xserver gives its clients in the
// private data of its accept (XRCSRQNumber, a 32-bit number in network
// order, as rdma_xserver.c writes and rdma_xclient.c reads it). ibtool's
// rping, rdma_xserver and rdma_xclient speak them, so either side can be
// rdmacm-utils' program.
package rdmacmutils
