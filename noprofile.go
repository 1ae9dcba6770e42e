//go:build !profile

package main

import (
	"errors"
	"os"
)

// startProfiles refuses IBTOOL_CPUPROFILE and IBTOOL_MEMPROFILE: the
// profiles are in builds with -tags profile (profile.go), so that the
// tools' start does not pay for runtime/pprof.
func startProfiles() (stop func(), err error) {
	for _, v := range []string{"IBTOOL_CPUPROFILE", "IBTOOL_MEMPROFILE"} {
		if os.Getenv(v) != "" {
			return func() {}, errors.New(v + " is set, but this ibtool was built without profiles; build it with 'make build TAGS=netgo,osusergo,profile'")
		}
	}
	return func() {}, nil
}
