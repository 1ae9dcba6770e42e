package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the platforms Go
// runs Linux on with 4 KiB base pages.
const hugePage = 2 << 20

// Where the kernel says when it backs anonymous memory with huge pages,
// how it accounts memory a program maps, and how much there is (variables
// for tests).
var (
	thpSetting = "/sys/kernel/mm/transparent_hugepage/enabled"
	overcommit = "/proc/sys/vm/overcommit_memory"
	meminfo    = "/proc/meminfo"
)

// advised is the most Advise has advised in this process. The advice
// stays on the heap's mappings, which the heap reuses after a GC, so a
// later call for no more (the exporter rediscovers the fabric every few
// minutes) has nothing to do.
var advised atomic.Int64

// Advise asks that the next n bytes of heap be backed by transparent huge
// pages where the kernel backs only advised memory with them; n is capped
// at a quarter of the machine's memory. It reports whether it advised
// anything: not when the kernel gives huge pages to all memory anyway, or
// to none, or when it counts every mapping against a commit limit (the
// object would take n of it, and a failed mapping stops a Go program), or
// when n is less than two huge pages. A call for no more than an earlier
// call advised reports true at once.
func Advise(n int) bool {
	if !advisedOnly() || strictOvercommit() {
		return false
	}
	if total := memTotal(); total > 0 {
		n = min(n, total/4)
	}
	if n < 2*hugePage {
		return false
	}
	if int64(n) <= advised.Load() {
		return true
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
	if err != nil {
		return false
	}
	advised.Store(max(advised.Load(), int64(n)))
	return true
}

// strictOvercommit reports whether the kernel refuses mappings beyond a
// commit limit (vm.overcommit_memory 2).
func strictOvercommit() bool {
	s, err := os.ReadFile(overcommit)
	return err == nil && strings.TrimSpace(string(s)) == "2"
}

// memTotal is the machine's memory in bytes from /proc/meminfo, 0 when
// not known.
func memTotal() int {
	s, err := os.ReadFile(meminfo)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(s), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.Atoi(f[0]); err == nil {
					return kb << 10
				}
			}
		}
	}
	return 0
}

// advisedOnly reports whether the kernel's setting is "madvise": huge
// pages for advised memory only.
func advisedOnly() bool {
	s, err := os.ReadFile(thpSetting)
	return err == nil && bytes.Contains(s, []byte("[madvise]"))
}
