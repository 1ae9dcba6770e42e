package sigrelay

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signals are the signals the relay catches.
var signals = []os.Signal{os.Interrupt, syscall.SIGTERM}

var relay struct {
	once  sync.Once
	ready chan struct{} // closed once the process catches signals
	mu    sync.Mutex
	next  int
	ends  map[int]func(os.Signal) // each run's, until it is removed
}

// Start starts catching signals for the process, once, and returns what is
// closed when the process catches them.
func Start() <-chan struct{} {
	relay.once.Do(func() {
		relay.ready = make(chan struct{})
		relay.ends = make(map[int]func(os.Signal))
		go func() {
			c := make(chan os.Signal, 1)
			signal.Notify(c, signals...)
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
		signal.Reset(s)
		if sig, ok := s.(syscall.Signal); ok {
			syscall.Kill(syscall.Getpid(), sig)
		}
		return
	}
	for _, end := range relay.ends {
		end(s)
	}
}
