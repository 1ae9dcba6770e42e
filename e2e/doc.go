// Package e2e holds ibtool's differential tests: each starts a simulated
// fabric (ibsim and opensm, through internal/simfabric), runs an
// infiniband-diags tool under libumad2sim and the same ibtool command,
// both as "ibtool TOOL" and through a symlink named after the tool, and
// compares what they print.
//
// The tests use the binary named by $IBTOOL_BIN, or build one. They skip
// when the bench is not installed, and fail instead when
// IBTOOL_REQUIRE_BENCH=1 (as make test sets it).
package e2e
