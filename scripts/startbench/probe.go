package main

import (
	"fmt"
	"slices"
	"syscall"
	"time"
)

// probePages is how many pages one round of the page probe maps and
// writes: about as many as a one-MAD tool of ibtool touches in a run.
const probePages = 512

// machineCost is what this machine charges for the two things a short
// process does most of besides its own work: the first write to a page
// of fresh memory (the fault, the zeroed page, and on a virtual machine
// with shadow page tables the hypervisor's share), and a system call.
type machineCost struct {
	Page, Syscall time.Duration
}

func (m machineCost) String() string {
	return fmt.Sprintf("first write to a page %.2f µs, a system call %.2f µs",
		float64(m.Page)/float64(time.Microsecond), float64(m.Syscall)/float64(time.Microsecond))
}

// probeMachine measures machineCost: the median of rounds rounds, each
// mapping probePages fresh anonymous pages, writing a byte to each and
// unmapping them, and each making calls getppid calls.
func probeMachine(rounds, calls int) (machineCost, error) {
	pages := make([]time.Duration, 0, rounds)
	sys := make([]time.Duration, 0, rounds)
	page := syscall.Getpagesize()
	size := probePages * page
	for range rounds {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			return machineCost{}, fmt.Errorf("mapping %d pages: %w", probePages, err)
		}
		start := time.Now()
		for i := 0; i < size; i += page {
			b[i] = 1
		}
		pages = append(pages, time.Since(start)/probePages)
		if err := syscall.Munmap(b); err != nil {
			return machineCost{}, fmt.Errorf("unmapping the probe's pages: %w", err)
		}
		start = time.Now()
		for range calls {
			syscall.RawSyscall(syscall.SYS_GETPPID, 0, 0, 0)
		}
		sys = append(sys, time.Since(start)/time.Duration(max(calls, 1)))
	}
	slices.Sort(pages)
	slices.Sort(sys)
	return machineCost{Page: pages[len(pages)/2], Syscall: sys[len(sys)/2]}, nil
}
