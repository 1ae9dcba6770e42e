//go:build cgo && linux

package sigcatch

/*
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SIGCATCH_NSIG 65

static int wake_fd = -1;
static int pending[SIGCATCH_NSIG];
static struct sigaction saved[SIGCATCH_NSIG];

// on_signal runs on whatever thread the signal reaches, on the runtime's
// signal stack on a Go thread (SA_ONSTACK): it only records the signal
// and wakes the reader, both async-signal-safe.
static void on_signal(int sig) {
	int e = errno;
	__atomic_store_n(&pending[sig], 1, __ATOMIC_SEQ_CST);
	char b = 1;
	ssize_t n = write(wake_fd, &b, 1); // a full pipe already wakes the reader
	(void)n;
	errno = e;
}

static int catch_signal(int sig, int fd) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	__atomic_store_n(&wake_fd, fd, __ATOMIC_SEQ_CST);
	if (sigaction(sig, &sa, &saved[sig]) != 0) {
		return errno;
	}
	return 0;
}

static int release_signal(int sig) {
	if (sigaction(sig, &saved[sig], NULL) != 0) {
		return errno;
	}
	return 0;
}

// take_signals returns the signals recorded since the last call, bit
// sig-1 for signal sig, and forgets them.
static unsigned long long take_signals(void) {
	unsigned long long set = 0;
	for (int sig = 1; sig < SIGCATCH_NSIG; sig++) {
		if (__atomic_load_n(&pending[sig], __ATOMIC_SEQ_CST) && __atomic_exchange_n(&pending[sig], 0, __ATOMIC_SEQ_CST)) {
			set |= 1ULL << (sig - 1);
		}
	}
	return set;
}
*/
import "C"

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
)

// catcher is the process's one set of caught signals: the wake pipe and
// the channels each signal goes to.
type catcher struct {
	mu     sync.Mutex
	wakeFD int      // the pipe's writing end, for the C handler; never closed, as a handler may still hold it
	wake   *os.File // the pipe's reading end, waiting in the network poller
	subs   map[chan<- os.Signal][]syscall.Signal
	count  [numSig]int // channels per signal; its handler is installed while above 0
}

var theCatcher = catcher{wakeFD: -1}

// Notify makes the signals sigs arrive on c, as os/signal's Notify does:
// a send that would block is dropped, so c should be buffered. The C
// handler replaces the runtime's for each signal until Stop, so
// os/signal's channels get none of them meanwhile. It panics when c is nil
// or a signal is not a syscall.Signal from 1 to 64; it panics too when
// the pipe cannot be made or the handler installed (out of descriptors).
func Notify(c chan<- os.Signal, sigs ...os.Signal) {
	if c == nil {
		panic("sigcatch: Notify using nil channel")
	}
	k := &theCatcher
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.start(); err != nil {
		panic(fmt.Sprintf("sigcatch: %v", err))
	}
	for _, s := range sigs {
		n := number(s)
		if k.count[n] == 0 {
			if e := C.catch_signal(C.int(n), C.int(k.wakeFD)); e != 0 {
				panic(fmt.Sprintf("sigcatch: catching %v: %v", s, syscall.Errno(e)))
			}
		}
		k.count[n]++
		k.subs[c] = append(k.subs[c], n)
	}
}

// Stop stops the delivery of signals to c. A signal caught before Stop
// is on c (unless c was full) when Stop returns, and a signal that c was
// the last to ask for has its former handler (the runtime's) back.
func Stop(c chan<- os.Signal) {
	k := &theCatcher
	k.mu.Lock()
	defer k.mu.Unlock()
	sigs, ok := k.subs[c]
	if !ok {
		return
	}
	for _, n := range sigs {
		k.count[n]--
		if k.count[n] == 0 {
			C.release_signal(C.int(n))
		}
	}
	k.deliver()
	delete(k.subs, c)
}

// start makes the wake pipe and starts its reader, the first time.
func (k *catcher) start() error {
	if k.wake != nil {
		return nil
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return fmt.Errorf("making the wake pipe: %w", err)
	}
	// A non-blocking descriptor makes a File that waits in the poller.
	k.wake, k.wakeFD = os.NewFile(uintptr(p[0]), "sigcatch wake pipe"), p[1]
	k.subs = map[chan<- os.Signal][]syscall.Signal{}
	go k.read()
	return nil
}

// read waits for the handler's wake-ups and delivers what it recorded.
func (k *catcher) read() {
	var b [64]byte
	for {
		if _, err := k.wake.Read(b[:]); err != nil {
			return // never closed: only a broken poller ends it
		}
		k.mu.Lock()
		k.deliver()
		k.mu.Unlock()
	}
}

// deliver sends each signal recorded since the last call to every
// channel that asked for it, dropping a send that would block.
func (k *catcher) deliver() {
	set := uint64(C.take_signals())
	for n := syscall.Signal(1); set != 0; n++ {
		if set&1 != 0 {
			k.send(n)
		}
		set >>= 1
	}
}

// send sends n to every channel that asked for it.
func (k *catcher) send(n syscall.Signal) {
	for c, sigs := range k.subs {
		if slices.Contains(sigs, n) {
			select {
			case c <- n:
			default:
			}
		}
	}
}
