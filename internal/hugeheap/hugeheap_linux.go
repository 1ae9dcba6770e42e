package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms Go
// runs Linux on with 4 KiB base pages.
const hugePage = 2 << 20

// thpSetting is where the kernel says when it backs anonymous memory with
// huge pages (a variable for tests).
var thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"

// Advise asks that the next n bytes of heap be backed by transparent huge
// pages where the kernel backs only advised memory with them. It reports
// whether it advised anything: not when the kernel gives huge pages to all
// memory anyway, or to none, or when n is less than two huge pages.
func Advise(n int) bool {
	if n < 2*hugePage || !advisedOnly() {
		return false
	}
	b := make([]byte, n)
	base := uintptr(unsafe.Pointer(&b[0]))
	start := (base+hugePage-1)&^(hugePage-1) - base
	end := (base+uintptr(n))&^(hugePage-1) - base
	if end <= start {
		return false
	}
	err := unix.Madvise(b[start:end], unix.MADV_HUGEPAGE)
	// Free the object now, so that what is allocated next reuses its
	// pages.
	runtime.GC()
	return err == nil
}

// advisedOnly reports whether the kernel's setting is "madvise": huge
// pages for advised memory only.
func advisedOnly() bool {
	s, err := os.ReadFile(thpSetting)
	return err == nil && bytes.Contains(s, []byte("[madvise]"))
}
