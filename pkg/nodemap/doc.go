// Package nodemap reads node name maps: files that give nodes, by GUID,
// the names diagnostics print instead of their node descriptions, in the
// format of rdma-core's ib-node-name-map (/etc/rdma/ib-node-name-map by
// default).
//
//	# comment
//	0x0002c90300a1b2c4 "node17 HCA-1"
//	0x0002c90300a1b2d0 "leaf switch 3"
package nodemap
