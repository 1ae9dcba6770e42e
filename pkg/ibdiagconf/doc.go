// Package ibdiagconf reads ibdiag.conf, the file of defaults every
// infiniband-diags tool reads before its options
// (/etc/infiniband-diags/ibdiag.conf, or the file -z names):
//
//	# comment
//	CA=mlx5_0
//	Port=1
//	timeout=50
//	MLX_EPI=false
//	m_key=0x00
//	sa_key=0x00
//
// The keys are rdma-core 44's (infiniband-diags/ibdiag_common.c,
// read_ibdiag_config). That parser never fails: it matches keys by prefix,
// ignores lines it does not know, and crashes on a known key without a
// value. This one reads the same files to the same settings where they are
// well formed, and rejects, with the file and line, every line the two
// would read to different settings, but for blanks around a value: this
// one trims them, where rdma-core keeps them in a CA name, which then
// names no device.
package ibdiagconf
