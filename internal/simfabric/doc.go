// Package simfabric is the bench: a simulated InfiniBand fabric on one
// machine, for integration tests, differential tests and benchmarks.
//
// Start brings up a fabric from a net file (ibsim's topology format, which is
// what ibnetdiscover writes; FatTree generates fat trees of any size): it runs
// ibsim in a fresh temporary directory under a socket name of its own, so
// parallel test binaries never meet, with its limits raised to fit the net
// file; then opensm under the umad2sim shim and the bench's RMPP layer; and
// it returns when the subnet is up and every cabled port is Active. Stop
// kills both process groups and removes the directory (IBTOOL_KEEP_FABRIC=1
// keeps it).
//
// # Readiness
//
// A fabric is ready when opensm has logged "SUBNET UP" and ibsim's own port
// table (its console's Dump command) shows every cabled port Active, every
// switch port 0 and every cabled CA port with a LID, and as many cabled ports
// as the net file lists. Dump is ibsim's ground truth, sends no MAD and takes
// none of ibsim's ten client slots; its cost grows with switches times LIDs
// (it prints every forwarding table), far below what opensm's routing of
// the same fabric costs (docs/bench.md). The reply is parsed as a stream and
// its disk space freed at once.
//
// # Console and faults
//
// ibsim reads its console from standard input. Start makes that a FIFO in the
// fabric directory which ibsim holds open for reading and writing, so ibsim
// never sees end of file (with stdin at /dev/null, ibsim spins a core) and
// any process may write a command line to it: Fabric.Console, its typed
// forms (Unlink, Link, ReLink, SetErrorRate, PerformanceSet) and
// `simfab console`. ibsim's standard output carries only console replies,
// each ended by its "sim> " prompt; its standard error, with the packet
// warnings, goes to a separate log so that a warning never splits a reply.
//
// Freeze stops ibsim (SIGSTOP) as a hung simulator and Thaw resumes it;
// FreezeForTest thaws at the end of the test however it ends, and Stop
// works on a frozen fabric. KillSimulator kills ibsim as a crash would.
// RunIbtoolTimed and RunReferenceTimed run a tool and carry out Events
// while it runs, each at its time after the start (signals, freezes,
// a crash), and say when each came and when the tool ended.
//
// # RMPP
//
// Debian's umad2sim shim (ibsim 0.10) copies at most 256 bytes of a MAD and
// does none of the kernel's RMPP, so opensm's SA tables (SubnAdmGetTable)
// reached the C tools cut to their first segment: saquery printed one
// NodeRecord on a fabric of 234 nodes. The bench preloads a small library of
// its own ahead of the shim, rmppshim/rmppshim.c, which does what the
// kernel's MAD layer does for agents registered with an RMPP version: it
// cuts opensm's long responses into DATA segments sent window by window as
// ACKs come, resends what is lost, and puts the segments back together for
// saquery and the like, with the kernel's ENOSPC protocol for a short read.
// Preload returns the LD_PRELOAD value (the layer, then the shim) and
// compiles the layer with gcc on first use into a cache directory named
// after the sources' hash; `simfab preload` prints it. RMPPSHIM_DEBUG=1 in
// the environment of opensm or a tool logs what the layer sees and does.
//
// # Clients
//
// RunReference runs an infiniband-diags tool under Preload, RunIbtool runs
// ibtool with IBSIM_SOCKNAME set; both run in a scratch directory (the shim
// leaves ./sys-<pid> behind) and at most eight at a time per fabric, since
// ibsim has ten client slots and opensm holds one. A client killed by a
// signal keeps its slot until ibsim's console releases it; the runners do
// that for the clients they kill.
//
// # Tests
//
// ForTest gives every test of a test binary the same fabric for the same
// options; Main, called from TestMain, stops them all at the end, on SIGINT
// or SIGTERM too. ibsim and opensm also die with the process that started
// them (PR_SET_PDEATHSIG), so a test binary that panics leaves no process
// behind. Without ibsim, opensm or gcc installed, ForTest skips the test,
// unless IBTOOL_REQUIRE_BENCH=1, when it fails it.
//
// The fabric directory holds fabric.json (socket name, PIDs, paths), so that
// another process can Attach to a fabric it did not start, as the simfab
// command in scripts/ does for start, stop, console and diff.
package simfabric
