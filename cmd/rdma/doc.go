// Package rdma holds rdma_bw, RDMA WRITE bandwidth between two hosts as
// perftest's ib_write_bw measures it, on pkg/verbs.
package rdma
