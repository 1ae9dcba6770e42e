//go:build !cgo || !linux

package sigcatch

import (
	"os"
	"os/signal"
)

// Notify makes the signals sigs arrive on c: os/signal's Notify, where
// there is no cgo for a handler of sigcatch's own. It panics when c is
// nil or a signal is not a syscall.Signal from 1 to 64.
func Notify(c chan<- os.Signal, sigs ...os.Signal) {
	if c == nil {
		panic("sigcatch: Notify using nil channel")
	}
	for _, s := range sigs {
		number(s)
	}
	signal.Notify(c, sigs...)
}

// Stop stops the delivery of signals to c: os/signal's Stop.
func Stop(c chan<- os.Signal) { signal.Stop(c) }
