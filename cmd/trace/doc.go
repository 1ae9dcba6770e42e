// Package trace holds trace (RDMA packet captures decoded and reassembled,
// on pkg/trace) and decode_mad (one MAD in hex, decoded).
package trace
