package sigrelay

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// signals are the signals the relay catches.
var signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

var relay struct {
	once  sync.Once
	ready chan struct{} // closed once the process catches signals
	mu    sync.Mutex
	next  int
	ends  map[int]func(os.Signal) // each run's, until it is removed
	last  syscall.Signal          // the last signal handed to a run
}

// Start starts catching signals for the process, once, and returns what is
// closed when the process catches them.
func Start() <-chan struct{} {
	relay.once.Do(func() {
		relay.ready = make(chan struct{})
		relay.ends = make(map[int]func(os.Signal))
		// A signal the process was started with ignored (a command a
		// shell without job control runs with &) stays ignored, as it
		// does for a C tool: Ctrl-C is not for it.
		var catch []os.Signal
		for _, s := range signals {
			if !signal.Ignored(s) {
				catch = append(catch, s)
			}
		}
		go func() {
			c := make(chan os.Signal, 1)
			if len(catch) > 0 {
				signal.Notify(c, catch...)
			}
			close(relay.ready)
			for s := range c {
				deliver(s)
			}
		}()
	})
	return relay.ready
}

// Add calls end with each signal caught until remove is called, and starts
// catching them if nothing has (Start). After remove returns, end is not
// called again; a signal end took before is the caller's to see.
func Add(end func(os.Signal)) (remove func()) {
	Start()
	relay.mu.Lock()
	id := relay.next
	relay.next++
	relay.ends[id] = end
	relay.mu.Unlock()
	return func() {
		relay.mu.Lock()
		delete(relay.ends, id)
		relay.mu.Unlock()
	}
}

// deliver passes s to every run in progress. With none (the invocation
// has ended and is on its way out, or has not begun), s does what it
// would have done uncaught: it kills the process.
func deliver(s os.Signal) {
	relay.mu.Lock()
	defer relay.mu.Unlock()
	if len(relay.ends) == 0 {
		if sig, ok := s.(syscall.Signal); ok {
			raise(sig)
		}
		return
	}
	if sig, ok := s.(syscall.Signal); ok {
		relay.last = sig
	}
	for _, end := range relay.ends {
		end(s)
	}
}

// Exit ends the process with exit status code, or by the signal code
// stands for: when code is 128 plus the number of the last signal handed
// to a run, the process raises that signal again with its default action,
// as a program that cleans up after SIGINT should. Its parent then sees
// what it sees of a C tool the signal killed: a shell stops a script's
// loop at Ctrl-C only when the command it waited for died of the signal,
// and goes on when it exited with 130.
func Exit(code int) {
	relay.mu.Lock()
	sig := relay.last
	relay.mu.Unlock()
	if sig != 0 && code == 128+int(sig) {
		raise(sig)
		// The signal is on its way to one of the process's threads;
		// should it not end the process, the status says it.
		time.Sleep(100 * time.Millisecond)
	}
	os.Exit(code)
}

// raise sends sig to the process with its default action back, which for
// SIGINT and SIGTERM ends it.
func raise(sig syscall.Signal) {
	signal.Reset(sig)
	syscall.Kill(syscall.Getpid(), sig)
}
