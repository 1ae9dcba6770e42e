package sigcatch

import (
	"fmt"
	"os"
	"syscall"
)

// numSig bounds the signals caught: 1 to 64, Linux's.
const numSig = 65

// number returns s's number, or panics: Notify takes syscall.Signals
// from 1 to 64 only.
func number(s os.Signal) syscall.Signal {
	n, ok := s.(syscall.Signal)
	if !ok || n < 1 || n >= numSig {
		panic(fmt.Sprintf("sigcatch: cannot catch %v", s))
	}
	return n
}
