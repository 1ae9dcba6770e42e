//go:build profile

package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts what IBTOOL_CPUPROFILE (a CPU profile of the run)
// and IBTOOL_MEMPROFILE (an allocation profile of the whole run) ask for;
// stop writes them. They are in builds with -tags profile only: linking
// runtime/pprof turns on the runtime's memory profiling in every run of
// every tool (docs/bench.md, Start-up).
func startProfiles() (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if path := os.Getenv("IBTOOL_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 512
		stops = append(stops, func() {
			runtime.GC() // the profile counts allocations up to the last GC
			f, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "ibtool: IBTOOL_MEMPROFILE: %v\n", err)
			}
		})
	}
	if path := os.Getenv("IBTOOL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return stop, fmt.Errorf("IBTOOL_CPUPROFILE: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return stop, fmt.Errorf("IBTOOL_CPUPROFILE: %w", err)
		}
		stops = append(stops, func() {
			pprof.StopCPUProfile()
			f.Close()
		})
	}
	return stop, nil
}
