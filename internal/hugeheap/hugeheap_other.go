//go:build !linux

package hugeheap

// Advise does nothing where there are no transparent huge pages; it
// reports false.
func Advise(n int) bool { return false }
