package madtest

import (
	"sync"

	"github.com/ibtool/ibtool/pkg/mad"
)

// MethodCounter counts the requests a handler is given by whether their
// method changes state: a dry run's tests check that none that does
// reaches the port while the Gets still do.
type MethodCounter struct {
	mu         sync.Mutex
	gets, sets int
}

// Count returns h counting each request it is given.
func (c *MethodCounter) Count(h Handler) Handler {
	return func(req *mad.Packet) []mad.Packet {
		var hd mad.Header
		if hd.UnmarshalBinary(req.MAD) == nil {
			c.mu.Lock()
			if hd.Method.ChangesState() {
				c.sets++
			} else {
				c.gets++
			}
			c.mu.Unlock()
		}
		return h(req)
	}
}

// Gets returns how many requests that change nothing it counted.
func (c *MethodCounter) Gets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets
}

// Sets returns how many requests that change state it counted.
func (c *MethodCounter) Sets() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sets
}
