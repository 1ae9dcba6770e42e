// Package oneproc starts the program it is linked into on one scheduler
// processor (GOMAXPROCS 1), from an init that runs before nearly every
// other package's: it imports nothing but runtime, and Go initialises a
// package as soon as its imports are, in import path order.
//
// ibtool's main package imports it for that init alone. Most of ibtool's
// tools send a few MADs and wait for the answers. On more than one
// processor the runtime starts threads and spins them looking for work
// that does not come, which such a tool pays for in page faults, context
// switches and CPU taken from the simulator or the machine's other work
// (docs/bench.md, Start-up). A program cannot choose the runtime's first
// value, so this is the earliest place to set it. Every tool not marked
// light gets the runtime's default back before it runs (cmdutil's
// Tool.Light).
package oneproc
