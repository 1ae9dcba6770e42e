// Package sigrelay catches SIGINT and SIGTERM once per process and hands
// each to the runs in progress (Add), so that a tool can end cleanly
// instead of dying half way through, for example, its attach to ibsim.
//
// signal.Notify hands each signal it enables to the runtime's signal
// thread and waits for it, starting that thread and a template thread
// first: on the bench that is 0.3 to 0.7 ms of a one-MAD tool's 3
// (docs/bench.md, Start-up). So Start does it on a goroutine of its own,
// beside the tool's start (on one scheduler processor, as the light tools
// run, the goroutine runs when the tool first waits), and returns what is
// closed once it is done:
// what must not be killed half done waits for that (until then a signal
// kills the process, as it kills a C tool).
//
// The catch is never released: signal.Stop would wait on the signal
// thread again. A signal that comes when no run is in progress does what
// it would have done uncaught: it kills the process.
//
// A run that a signal ended leaves the process to Exit, which raises the
// signal again once the run has cleaned up, so that the process still dies
// of it, as the C tools do.
package sigrelay
