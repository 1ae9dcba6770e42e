// Package sigcatch catches signals the way os/signal's Notify and Stop do,
// without the threads os/signal keeps for it.
//
// os/signal delivers through a goroutine that blocks a thread of its own
// in the runtime, and it changes the signal mask through another
// goroutine locked to a thread, with a round trip to that thread for each
// signal enabled or disabled. A one-shot tool that catches SIGINT and
// SIGTERM only to end cleanly pays for those threads on every run. Where
// cgo is available, sigcatch installs a C handler instead: it records the
// signal and writes a byte to a non-blocking pipe whose reading end waits
// in the runtime's network poller, so catching a signal costs no thread.
// Without cgo, Notify and Stop are os/signal's.
package sigcatch
