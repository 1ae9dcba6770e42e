package oneproc

import "runtime"

func init() { runtime.GOMAXPROCS(1) }
